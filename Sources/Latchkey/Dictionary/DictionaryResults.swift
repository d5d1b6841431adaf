import Foundation

/// Shapes engine results the way `SecItemCopyMatching` and `SecItemAdd` return them (SEMANTICS.md §2).
enum DictionaryResults {
    /// No return key: nil. Only data: the data. Only a persistent reference: the reference. Anything else:
    /// a dictionary. A limit above one: an array of those, even for one match.
    static func shape(_ results: [ItemResult], returning: ReturnOptions, single: Bool) -> Any? {
        guard !returning.isEmpty else { return nil }
        let shaped = results.map { element($0, returning: returning) }
        return single ? shaped.first : shaped
    }

    static func element(_ result: ItemResult, returning: ReturnOptions) -> Any {
        if returning == .data { return result.data ?? Data() }
        if returning == .persistentReference { return result.persistentReference }
        var dictionary: [String: Any] = [:]
        if returning.contains(.attributes) {
            for (key, value) in result.attributes {
                // The access control comes back as an `AccessControl` (LatchkeySecurity hands out a
                // SecAccessControl for it), as Apple returns a SecAccessControlRef.
                if key == .accessControl, let control = AccessControl(attributeValue: value) {
                    dictionary[key.rawValue] = control
                } else {
                    dictionary[key.rawValue] = DictionaryValue.object(value)
                }
            }
        }
        if returning.contains(.data) || returning.contains(.reference) {
            dictionary[SecItemKey.valueData] = result.data ?? Data()
        }
        if returning.contains(.reference) { dictionary[SecItemKey.class] = result.itemClass.rawValue }
        if returning.contains(.persistentReference) {
            dictionary[SecItemKey.valuePersistentRef] = result.persistentReference
        }
        return dictionary
    }
}
