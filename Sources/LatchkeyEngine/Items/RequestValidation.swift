import FoundationEssentials

/// Which access groups an operation may see, after checking the caller's entitlements.
enum GroupScope: Sendable {
    /// Every group (the caller holds the wildcard and named none).
    case all
    /// Only these groups.
    case only([String])
}

/// An add, checked against the class schema and the caller's entitlements.
struct ValidatedAdd: Sendable {
    let schema: ItemSchema
    /// Class attributes (coerced), without the bookkeeping attributes.
    let attributes: [AttributeKey: AttributeValue]
    let group: String
    let accessibility: Accessibility
    let synchronizable: Bool
    let data: Data?
    /// The access control (`accc`), whose protection is `accessibility`.
    let accessControl: AccessControl?
}

/// A search, update or delete query, checked the same way.
struct ValidatedQuery: Sendable {
    let schema: ItemSchema
    /// Class attributes every match must have (coerced); `cdat`/`mdat` included when given.
    let filters: [AttributeKey: AttributeValue]
    let groups: GroupScope
    let accessibility: Accessibility?
    let synchronizable: SynchronizableFilter
    /// The row and id a persistent reference names.
    let reference: (rowID: Int64, id: Data)?
    let limit: Int?
    let returning: ReturnOptions
    let authenticationUI: AuthenticationUI
    let operationPrompt: String?
    /// Filters inside the certificates (certificate searches only; nil when there are none).
    let certificateMatch: CertificateMatch?
    /// `kSecMatchHostOrSubdomainOfHost`, lowercased (internet-password searches only).
    var hostOrSubdomainOf: String? = nil

    /// Whether the filters name every primary-key attribute, so the primary-key digest finds the item.
    var namesWholePrimaryKey: Bool { schema.primaryKey.allSatisfy { filters[$0] != nil } }
}

/// Changes for an update, checked likewise.
struct ValidatedChanges: Sendable {
    let attributes: [AttributeKey: AttributeValue]
    let group: String?
    let accessibility: Accessibility?
    let synchronizable: Bool?
    let data: Data?
    /// A new access control (`accc`), whose protection becomes the item's accessibility.
    let accessControl: AccessControl?
}

enum RequestValidation {
    static func schema(for itemClass: ItemClass) throws(KeychainError) -> ItemSchema {
        guard let schema = ItemSchema.of(itemClass) else {
            throw KeychainError(
                .unimplemented,
                "class idnt has no items of its own: an identity is a certificate joined with its private key, which the SecItem functions (the dictionary layer) compose"
            )
        }
        return schema
    }

    static func requireGroups(_ caller: CallerIdentity) throws(KeychainError) {
        guard !caller.accessGroups.isEmpty else {
            throw KeychainError(
                .missingEntitlement, "caller \(caller.applicationIdentifier) holds no access groups")
        }
    }

    static func checkData(_ data: Data?) throws(KeychainError) {
        if let data, data.count > ItemLimits.maximumDataBytes {
            throw KeychainError.param(
                "v_Data is \(data.count) bytes; the limit is \(ItemLimits.maximumDataBytes) bytes (16 MiB)")
        }
    }

    static func group(from value: AttributeValue, schema: ItemSchema, caller: CallerIdentity)
        throws(KeychainError) -> String
    {
        guard case .string(let group) = try schema.coerce(value, for: .accessGroup) else {
            throw KeychainError.param("attribute 'agrp' must be a string")
        }
        guard !group.isEmpty, group != CallerIdentity.wildcardGroup else {
            throw KeychainError.param("attribute 'agrp' must name an access group, not '\(group)'")
        }
        guard caller.canUse(group: group) else {
            throw KeychainError(
                .missingEntitlement, "caller \(caller.applicationIdentifier) is not entitled to access group \(group)")
        }
        return group
    }

    static func accessibility(from value: AttributeValue, schema: ItemSchema) throws(KeychainError)
        -> Accessibility
    {
        guard case .string(let code) = try schema.coerce(value, for: .accessible),
            let accessibility = Accessibility(rawValue: code)
        else { throw KeychainError.param("attribute 'pdmn' must be an accessibility code") }
        return accessibility
    }

    static func synchronizable(from value: AttributeValue, schema: ItemSchema) throws(KeychainError) -> Bool {
        switch try schema.coerce(value, for: .synchronizable) {
        case .number(0): return false
        case .number(1): return true
        default: throw KeychainError.param("attribute 'sync' must be a boolean (or kSecAttrSynchronizableAny)")
        }
    }

    /// An `accc` value: an `AccessControl` Apple would accept.
    static func accessControl(from value: AttributeValue, schema: ItemSchema) throws(KeychainError) -> AccessControl {
        guard let control = AccessControl(attributeValue: try schema.coerce(value, for: .accessControl)) else {
            throw KeychainError.param("attribute 'accc' must be an access control (SecAccessControlCreateWithFlags)")
        }
        try control.validate()
        return control
    }

    /// Apple's rules for an item's protection: `pdmn` beside an access control must be its protection and
    /// the control must have no constraints (Apple: "conflicting kSecAccess and kSecAccessControl
    /// attributes"), and an item whose access control has constraints cannot sync ("item with
    /// kSecAttrAccessControl is not synchronizable"). A synchronizable item of a ThisDeviceOnly class is
    /// accepted, as Apple accepts it; it never leaves the device.
    static func checkProtection(
        accessibility: Accessibility?, accessControl: AccessControl?, synchronizable: Bool
    ) throws(KeychainError) {
        guard let accessControl else { return }
        if let accessibility, accessibility != accessControl.protection || !accessControl.flags.isEmpty {
            throw KeychainError.param("conflicting kSecAttrAccessible and kSecAttrAccessControl attributes")
        }
        if synchronizable && !accessControl.flags.isEmpty {
            throw KeychainError.param("an item with kSecAttrAccessControl constraints is not synchronizable")
        }
    }

    /// The attributes of an add or of changes, sorted: class attributes (coerced), and the bookkeeping ones
    /// the engine keeps apart — access group, accessibility, sync flag, access control. `cdat`/`mdat` are
    /// checked and dropped on an add (replaced by now, as Apple does) and refused in changes.
    private struct Classified {
        var attributes: [AttributeKey: AttributeValue] = [:]
        var group: String?
        var accessibility: Accessibility?
        var synchronizable: Bool?
        var control: AccessControl?
    }

    private static func classify(
        _ given: [AttributeKey: AttributeValue], schema: ItemSchema, caller: CallerIdentity, datesAllowed: Bool
    ) throws(KeychainError) -> Classified {
        var classified = Classified()
        // Sized once: grown one attribute at a time it was rehashed four times for an item's dozen.
        classified.attributes.reserveCapacity(given.count)
        let freeForm = given.keys.count(where: AttributeKey.isSecretServiceAttribute)
        guard freeForm <= ItemLimits.maximumSecretServiceAttributes else {
            throw KeychainError.param(
                "an item may have at most \(ItemLimits.maximumSecretServiceAttributes) Secret Service attributes, not \(freeForm)"
            )
        }
        for (key, value) in given {
            switch key {
            case .accessGroup: classified.group = try group(from: value, schema: schema, caller: caller)
            case .accessible: classified.accessibility = try accessibility(from: value, schema: schema)
            case .synchronizable: classified.synchronizable = try synchronizable(from: value, schema: schema)
            case .accessControl:
                let decoded = try accessControl(from: value, schema: schema)
                classified.control = decoded
                classified.attributes[key] = decoded.attributeValue
            case .creationDate, .modificationDate:
                _ = try schema.coerce(value, for: key)
                if !datesAllowed {
                    throw KeychainError.param(
                        "attribute '\(key.rawValue)' is set by the keychain and cannot be updated")
                }
            default: classified.attributes[key] = try schema.coerce(value, for: key)
            }
        }
        return classified
    }

    /// Only `createHeldKey` makes held keys: an add or update may not set `tkid` or store a held key's form.
    private static func refuseHeldKeyForms(_ attributes: [AttributeKey: AttributeValue], data: Data?)
        throws(KeychainError)
    {
        if attributes[.tokenID] != nil {
            throw KeychainError.param(
                "kSecAttrTokenID is set by the keychain on the keys it makes and holds (SecKeyCreateRandomKey with a token)"
            )
        }
        if attributes[.keyStorage] != nil {
            throw KeychainError.param("lkst (where a held key lives) is set by the keychain on the keys it holds")
        }
        if let data, HeldKeyData.isHeld(data) {
            throw KeychainError.param(
                "the data is the stored form of a key the keychain holds, which only the keychain writes")
        }
    }

    static func validate(_ item: NewItem, caller: CallerIdentity) throws(KeychainError) -> ValidatedAdd {
        let schema = try schema(for: item.itemClass)
        try requireGroups(caller)
        try checkData(item.data)
        let classified = try classify(item.attributes, schema: schema, caller: caller, datesAllowed: true)
        var attributes = classified.attributes
        let (accessibility, control) = (classified.accessibility, classified.control)
        if item.itemClass == .certificate, let data = item.data {
            attributes = try CertificateAttributes.completing(attributes, data: data, label: true)
        }
        if !item.isHeldKey { try refuseHeldKeyForms(attributes, data: item.data) }
        let synchronizable = classified.synchronizable ?? false
        guard let resolvedGroup = classified.group ?? caller.defaultGroup else {
            throw KeychainError(
                .missingEntitlement, "caller \(caller.applicationIdentifier) has no default access group")
        }
        try checkProtection(accessibility: accessibility, accessControl: control, synchronizable: synchronizable)
        let resolvedAccessibility =
            control?.protection ?? accessibility
            ?? (item.itemClass == .certificate ? .always : .whenUnlocked)
        return ValidatedAdd(
            schema: schema, attributes: attributes, group: resolvedGroup, accessibility: resolvedAccessibility,
            synchronizable: synchronizable, data: item.data, accessControl: control)
    }

    static func validate(_ query: ItemQuery, caller: CallerIdentity) throws(KeychainError) -> ValidatedQuery {
        let schema = try schema(for: query.itemClass)
        try requireGroups(caller)
        var filters: [AttributeKey: AttributeValue] = [:]
        filters.reserveCapacity(query.matching.count)
        var groups: GroupScope = caller.hasWildcard ? .all : .only(caller.accessGroups)
        var accessibility: Accessibility?
        var synchronizable = query.synchronizable
        for (key, value) in query.matching {
            switch key {
            case .accessGroup: groups = .only([try group(from: value, schema: schema, caller: caller)])
            case .accessible: accessibility = try Self.accessibility(from: value, schema: schema)
            case .synchronizable:
                synchronizable = try Self.synchronizable(from: value, schema: schema) ? .yes : .no
            default: filters[key] = try schema.coerce(value, for: key)
            }
        }
        var reference: (rowID: Int64, id: Data)?
        if let persistent = query.persistentReference {
            guard let parsed = PersistentReference.parse(persistent) else {
                throw KeychainError.param("v_PersistentRef is not a Latchkey persistent reference")
            }
            guard parsed.itemClass == query.itemClass else {
                throw KeychainError.param(
                    "v_PersistentRef names a \(parsed.itemClass.rawValue) item but the query is for \(query.itemClass.rawValue)"
                )
            }
            reference = (parsed.rowID, parsed.id)
            // A persistent reference names one item whatever its synchronizable flag (as Apple's does).
            if query.matching[.synchronizable] == nil { synchronizable = .any }
        }
        let limit: Int?
        switch query.limit {
        case .one: limit = 1
        case .all: limit = nil
        case .count(let count):
            guard count > 0 else { throw KeychainError.param("m_Limit must be a positive number, not \(count)") }
            limit = count
        }
        if let prompt = query.operationPrompt, prompt.utf8.count > 1_024 {
            throw KeychainError.param("u_OpPrompt is \(prompt.utf8.count) bytes; the limit is 1024")
        }
        var host: String?
        if let given = query.hostOrSubdomainOf {
            // Apple's server: errSecUnimplemented ("unsupported kSecMatchHostOrSubdomainOfHost attribute") for
            // the other classes.
            guard query.itemClass == .internetPassword else {
                throw KeychainError(
                    .unimplemented,
                    "kSecMatchHostOrSubdomainOfHost matches internet passwords, not \(query.itemClass.rawValue)")
            }
            guard !given.isEmpty, given.utf8.count <= 1_024 else {
                throw KeychainError.param("kSecMatchHostOrSubdomainOfHost must be a host name of 1 to 1024 bytes")
            }
            host = given.lowercased()
        }
        return ValidatedQuery(
            schema: schema, filters: filters, groups: groups, accessibility: accessibility,
            synchronizable: synchronizable, reference: reference, limit: limit, returning: query.returning,
            authenticationUI: query.authenticationUI, operationPrompt: query.operationPrompt,
            certificateMatch: query.itemClass == .certificate && !query.certificateMatch.isEmpty
                ? query.certificateMatch : nil,
            hostOrSubdomainOf: host)
    }

    static func validate(_ changes: ItemChanges, schema: ItemSchema, caller: CallerIdentity)
        throws(KeychainError) -> ValidatedChanges
    {
        try checkData(changes.data)
        let classified = try classify(changes.attributes, schema: schema, caller: caller, datesAllowed: false)
        let (accessibility, control) = (classified.accessibility, classified.control)
        var attributes = classified.attributes
        try refuseHeldKeyForms(attributes, data: changes.data)
        if schema.itemClass == .certificate, let data = changes.data {
            // New certificate bytes bring their own attributes (not the label: the item keeps its name).
            attributes = try CertificateAttributes.completing(attributes, data: data, label: false)
        }
        if let control, let accessibility, accessibility != control.protection || !control.flags.isEmpty {
            throw KeychainError.param("conflicting kSecAttrAccessible and kSecAttrAccessControl attributes")
        }
        return ValidatedChanges(
            attributes: attributes, group: classified.group, accessibility: control?.protection ?? accessibility,
            synchronizable: classified.synchronizable, data: changes.data, accessControl: control)
    }
}
