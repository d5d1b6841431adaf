public import Foundation
import Latchkey

// Apple's four SecItem functions and SecCopyErrorMessageString, over Latchkey's engine. A dictionary goes
// in, an OSStatus comes out, and the result (when asked for) comes back through the out-parameter in
// Apple's shapes: `Data`, `[String: Any]`, or an array of those, as Foundation objects.

/// Adds an item (`SecItemAdd`). `result` receives what the `kSecReturn…` keys ask for; with a nil `result`
/// pointer the result is dropped, as Apple's `SecItemResultProcess` drops it (SecItem.c) — the add is done.
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    guard let dictionary = swiftDictionary(attributes) else { return errSecParam }
    return run { () throws(KeychainError) in
        let value = try SecItemConfiguration.backend().add(dictionary)
        result?.pointee = value.map(foundationObject)
    }
}

/// Finds items (`SecItemCopyMatching`). With a nil `result` pointer the status alone says whether anything
/// matches (the result is dropped, as Apple's `SecItemResultProcess` drops it).
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    guard let dictionary = swiftDictionary(query) else { return errSecParam }
    return run { () throws(KeychainError) in
        let value = try SecItemConfiguration.backend().copyMatching(dictionary)
        result?.pointee = value.map(foundationObject)
    }
}

/// Updates every matching item (`SecItemUpdate`).
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    guard let dictionary = swiftDictionary(query), let changes = swiftDictionary(attributesToUpdate) else {
        return errSecParam
    }
    return run { () throws(KeychainError) in try SecItemConfiguration.backend().update(dictionary, with: changes) }
}

/// Deletes every matching item (`SecItemDelete`).
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    guard let dictionary = swiftDictionary(query) else { return errSecParam }
    return run { () throws(KeychainError) in try SecItemConfiguration.backend().delete(dictionary) }
}

/// Apple's message for a status (`SecCopyErrorMessageString`, from `SecBase.h`); `"OSStatus <n>"` for one
/// without a message.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    NSString(string: SecBaseMessages.table[status] ?? KeychainStatus(rawValue: status).message)
}

/// The detail of the most recent failure on this thread (what Apple writes to its log): which key, which
/// limit, which file. Never a secret. Latchkey's own addition; nil after a success.
public func SecCopyLastErrorDetail() -> String? {
    Thread.current.threadDictionary[lastErrorKey] as? String
}

private let lastErrorKey = "latchkey.SecItem.lastErrorDetail"

private func run(_ body: () throws(KeychainError) -> Void) -> OSStatus {
    do {
        try body()
        Thread.current.threadDictionary.removeObject(forKey: lastErrorKey)
        return errSecSuccess
    } catch {
        Thread.current.threadDictionary[lastErrorKey] = error.message
        return error.status.rawValue
    }
}

private func swiftDictionary(_ dictionary: CFDictionary) -> [String: Any]? {
    var result: [String: Any] = [:]
    for (key, value) in dictionary {
        guard let name = key as? String else { return nil }
        result[name] = value
    }
    return result
}

/// A Swift result as the Foundation object Apple's API hands out.
private func foundationObject(_ value: Any) -> AnyObject {
    switch value {
    case let data as Data: return NSData(data: data)
    case let dictionary as [String: Any]: return NSDictionary(dictionary: dictionary.mapValues(foundationObject))
    case let array as [Any]: return NSArray(array: array.map(foundationObject))
    case let text as String: return NSString(string: text)
    case let number as Int: return NSNumber(value: number)
    case let date as Date: return NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate)
    case let control as AccessControl: return SecAccessControl(control)
    case let certificate as Certificate: return SecCertificate(certificate)
    case let key as AsymmetricKey: return SecKey(key)
    case let key as HeldKey: return SecKey(held: key)
    case let identity as Identity: return SecIdentity(identity)
    case let identity as HeldIdentity: return SecIdentity(held: identity)
    default: return value as AnyObject
    }
}
