import Foundation
import LatchkeySecurity

// ---- Foundation gap (not Security): swift-corelibs-foundation has no NSMapTable ------------------------------
// Apple: `class NSMapTable<KeyType, ObjectType> : NSObject where KeyType : AnyObject, ObjectType : AnyObject`,
// `class func strongToWeakObjects() -> NSMapTable<KeyType, ObjectType>`, `func object(forKey: KeyType?) -> ObjectType?`,
// `func setObject(_ anObject: ObjectType?, forKey aKey: KeyType?)`. Stub: strong keys (by isEqual), weak values.
public final class NSMapTable<KeyType: AnyObject, ObjectType: AnyObject>: NSObject, @unchecked Sendable {
    private struct Weak { weak var object: ObjectType? }
    private var storage: [AnyHashable: Weak] = [:]
    public class func strongToWeakObjects() -> NSMapTable<KeyType, ObjectType> { NSMapTable<KeyType, ObjectType>() }
    private func key(_ key: KeyType) -> AnyHashable { (key as? AnyHashable) ?? AnyHashable(ObjectIdentifier(key)) }
    public func object(forKey aKey: KeyType?) -> ObjectType? { aKey.flatMap { storage[key($0)]?.object } }
    public func setObject(_ anObject: ObjectType?, forKey aKey: KeyType?) {
        guard let aKey else { return }
        storage[key(aKey)] = anObject.map { Weak(object: $0) }
    }
}
