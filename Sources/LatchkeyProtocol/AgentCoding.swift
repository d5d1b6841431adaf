package import FoundationEssentials
package import LatchkeyEngine
package import LatchkeyPKI

/// The byte layout of the agent's typed messages, over the engine's `ByteWriter`/`ByteReader`: attribute
/// dictionaries travel in the encoding of the encrypted attribute blob (`AttributeBlob`), everything else
/// as fixed-width integers and length-prefixed fields. Decoding checks every count against the bytes left,
/// refuses unknown tags and trailing bytes, and never traps.
package enum AgentCoding {
    /// Runs `body` over the bytes of `message` and requires it to consume all of them.
    package static func reading<T>(
        _ message: Data, _ body: (inout ByteReader) throws(AgentProtocolError) -> T
    ) throws(AgentProtocolError) -> T {
        let result: Result<T, AgentProtocolError> = message.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            do throws(AgentProtocolError) {
                let value = try body(&reader)
                guard reader.isAtEnd else {
                    throw AgentProtocolError.malformed(
                        "trailing bytes after the \(value is (UInt32, AgentRequest) ? "request" : "response")")
                }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// A message's header: "LK", this protocol's version, the request id and the operation.
    static func writeHeader(_ writer: inout ByteWriter, id: UInt32, operation: AgentOperation) {
        writer.appendRaw(AgentFrame.magic)
        writer.append(AgentFrame.version)
        writer.append(id)
        writer.append(operation.rawValue)
    }

    /// Reads what `writeHeader` wrote; refuses another magic, another protocol version or an unknown
    /// operation.
    static func readHeader(
        _ reader: inout ByteReader, what: String
    ) throws(AgentProtocolError) -> (id: UInt32, operation: AgentOperation) {
        let magic = try read(&reader) { Array(try $0.readRawBuffer(2)) }
        guard magic == AgentFrame.magic else { throw .malformed("not a Latchkey \(what)") }
        let version = try read(&reader) { try $0.readByte() }
        guard version == AgentFrame.version else {
            throw .malformed("protocol version \(version); this side speaks \(AgentFrame.version)")
        }
        let id = try read(&reader) { try $0.readUInt32() }
        let code = try read(&reader) { try $0.readByte() }
        guard let operation = AgentOperation(rawValue: code) else { throw .malformed("unknown operation \(code)") }
        return (id, operation)
    }

    /// One read, with running out of bytes reported as a truncated message.
    static func read<T>(_ reader: inout ByteReader, _ body: (inout ByteReader) throws -> T) throws(AgentProtocolError)
        -> T
    {
        do {
            return try body(&reader)
        } catch {
            throw .malformed("the message is truncated")  // ByteReader's only failure: it ran out of bytes.
        }
    }

    static func text(_ reader: inout ByteReader) throws(AgentProtocolError) -> String {
        try read(&reader) { try $0.readText() }
    }
    static func field(_ reader: inout ByteReader) throws(AgentProtocolError) -> Data {
        try read(&reader) { try $0.readField() }
    }

    /// A passphrase field, straight into the passphrase's locked memory (the message's bytes are the caller's
    /// to wipe, as every message is).
    static func passphrase(_ reader: inout ByteReader) throws(AgentProtocolError) -> Passphrase {
        var field = try self.field(&reader)
        defer { field.resetBytes(in: 0..<field.count) }
        return field.withUnsafeBytes { Passphrase(copying: $0) }
    }
    /// A derived unlock key's field, straight into its locked memory (as `passphrase`); exactly
    /// `DerivedUnlockKey.byteCount` bytes with a record that decodes, else malformed.
    static func derivedKey(_ reader: inout ByteReader) throws(AgentProtocolError) -> DerivedUnlockKey {
        var field = try self.field(&reader)
        defer { field.resetBytes(in: 0..<field.count) }
        guard let key = field.withUnsafeBytes({ DerivedUnlockKey(encoded: $0) }) else {
            throw .malformed(
                "a derived key is \(DerivedUnlockKey.byteCount) bytes: a key derivation record and its output")
        }
        return key
    }
    static func byte(_ reader: inout ByteReader) throws(AgentProtocolError) -> UInt8 {
        try read(&reader) { try $0.readByte() }
    }
    static func count(_ reader: inout ByteReader) throws(AgentProtocolError) -> Int {
        let count = Int(try read(&reader) { try $0.readUInt32() })
        guard count <= reader.remaining else { throw .malformed("a count larger than its message") }
        return count
    }
}

extension ByteWriter {
    /// A passphrase as a field: its 32-bit length, then its bytes (wiped with the message once it is sent).
    mutating func appendField(_ passphrase: Passphrase) {
        append(UInt32(passphrase.byteCount))
        passphrase.withUnsafeBytes { appendRaw($0) }
    }

    package mutating func append(_ strings: [String]) {
        append(UInt32(strings.count))
        for string in strings { appendField(string) }
    }

    package mutating func append(_ item: NewItem) {
        appendField(item.itemClass.rawValue)
        appendField(AttributeBlob.encode(item.attributes))
        appendOptional(item.data)
    }

    package mutating func append(_ query: ItemQuery) {
        appendField(query.itemClass.rawValue)
        appendField(AttributeBlob.encode(query.matching))
        switch query.synchronizable {
        case .no: append(0 as UInt8)
        case .yes: append(1 as UInt8)
        case .any: append(2 as UInt8)
        }
        appendOptional(query.persistentReference)
        switch query.limit {
        case .one: append(0 as UInt8)
        case .all: append(1 as UInt8)
        case .count(let count):
            append(2 as UInt8)
            append(UInt32(clamping: count))
        }
        append(UInt32(truncatingIfNeeded: query.returning.rawValue))
        switch query.authenticationUI {
        case .allow: append(0 as UInt8)
        case .fail: append(1 as UInt8)
        case .skip: append(2 as UInt8)
        }
        appendOptional(query.operationPrompt.map { Data($0.utf8) })
        append(query.certificateMatch)
        appendOptional(query.hostOrSubdomainOf.map { Data($0.utf8) })
    }

    private mutating func append(_ match: CertificateMatch) {
        append(UInt32(match.issuers.count))
        for issuer in match.issuers { appendField(issuer) }
        append(match.validOn == nil ? 0 as UInt8 : 1)
        if let date = match.validOn { append(date.timeIntervalSinceReferenceDate.bitPattern) }
        appendOptional(match.subjectContains.map { Data($0.utf8) })
        appendOptional(match.emailAddressIfPresent.map { Data($0.utf8) })
        append(match.caseInsensitive ? 1 as UInt8 : 0)
        append(match.trustedOnly ? 1 as UInt8 : 0)
        appendOptional(match.subjectStartsWith.map { Data($0.utf8) })
        appendOptional(match.subjectEndsWith.map { Data($0.utf8) })
        appendOptional(match.subjectWholeString.map { Data($0.utf8) })
        append(match.diacriticInsensitive ? 1 as UInt8 : 0)
        append(match.widthInsensitive ? 1 as UInt8 : 0)
        switch match.policy {
        case nil: append(0 as UInt8)
        case .basicX509: append(1 as UInt8)
        case .ssl(let server, let hostname):
            append(server ? 2 as UInt8 : 3)
            appendOptional(hostname.map { Data($0.utf8) })
        }
    }

    package mutating func append(_ changes: ItemChanges) {
        appendField(AttributeBlob.encode(changes.attributes))
        appendOptional(changes.data)
    }

    package mutating func append(_ result: ItemResult) {
        appendField(result.itemClass.rawValue)
        appendField(AttributeBlob.encode(result.attributes))
        appendOptional(result.data)
        appendField(result.persistentReference)
    }

    package mutating func append(_ settings: KeychainSettings) {
        append(Int64(settings.autoLockAfterSeconds ?? -1))
        append(settings.lockOnSleep ? 1 as UInt8 : 0)
    }

    package mutating func append(_ registration: ApplicationRegistration) {
        appendField(registration.executablePath)
        appendField(registration.executableDigest)
        appendField(registration.applicationIdentifier)
        append(registration.accessGroups)
    }

    package mutating func append(_ identity: CallerIdentity) {
        appendField(identity.applicationIdentifier)
        append(identity.accessGroups)
    }

    package mutating func append(_ status: KeychainServiceStatus) {
        switch status.lockState {
        case .neverUnlocked: append(0 as UInt8)
        case .locked: append(1 as UInt8)
        case .unlocked: append(2 as UInt8)
        }
        appendOptional(status.keychainPath.map { Data($0.utf8) })
        append(Int64(status.agentProcessIdentifier ?? -1))
        switch status.caller {
        case .identified(let identity):
            append(0 as UInt8)
            append(identity)
        case .registered(let identity):
            append(1 as UInt8)
            append(identity)
        case .unregistered: append(2 as UInt8)
        case .refused(let reason):
            append(3 as UInt8)
            appendField(reason)
        case .unknownUntilFirstUnlock: append(4 as UInt8)
        }
    }

    package mutating func append(_ reply: KeychainReply) {
        switch reply {
        case .none: break
        case .status(let status): append(status)
        case .item(let item):
            append(item == nil ? 0 as UInt8 : 1)
            if let item { append(item) }
        case .items(let items):
            append(UInt32(items.count))
            for item in items { append(item) }
        case .count(let count): append(Int64(count))
        case .flag(let flag): append(flag ? 1 as UInt8 : 0)
        case .registration(let registration): append(registration)
        case .registrations(let registrations):
            append(UInt32(registrations.count))
            for registration in registrations { append(registration) }
        case .settings(let settings): append(settings)
        case .bytes(let bytes): appendField(bytes)
        case .identities(let matches):
            append(UInt32(matches.count))
            for match in matches {
                append(match.certificate)
                append(match.key)
            }
        case .located(let found):
            append(UInt32(found.count))
            for entry in found {
                appendField(entry.reference)
                append(entry.isAvailable ? 1 as UInt8 : 0)
            }
        case .accessLists(let lists):
            append(UInt32(lists.count))
            for list in lists { append(list) }
        }
    }

    /// A program an access list names: its kind (1 executable, 2 Flatpak app, 3 confined), its name, and an
    /// executable's digest.
    package mutating func append(_ program: TrustedProgram) {
        switch program {
        case .executable(let path, let digest):
            append(1 as UInt8)
            appendField(path)
            appendField(digest)
        case .sandbox(let app):
            append(2 as UInt8)
            appendField(app)
        case .confined(let label):
            append(3 as UInt8)
            appendField(label)
        }
    }

    /// An item's access list: reference, class, summary (optional), then each entry's program, time and origin.
    package mutating func append(_ list: ItemAccessList) {
        appendField(list.reference)
        appendField(list.itemClass.rawValue)
        appendOptional(list.summary.map { Data($0.utf8) })
        append(UInt32(list.entries.count))
        for entry in list.entries {
            append(entry.program)
            append(Int64(entry.added.timeIntervalSince1970))
            append(entry.origin.rawValue)
        }
    }

    /// A private key to hold: its type, its external representation (wiped with the frame, as every secret
    /// in a message is) and its item's attributes.
    package mutating func appendImportedKey(_ key: AsymmetricKey, attributes: [AttributeKey: AttributeValue]) {
        appendField(key.type.rawValue)
        // A key that cannot be encoded goes as no bytes, which the agent refuses as no key of its type.
        let bytes = (try? key.externalRepresentation()).map { [UInt8]($0.copiedData()) } ?? []
        appendField(Data(bytes))
        appendField(AttributeBlob.encode(attributes))
    }

    package mutating func append(_ request: HeldKeyRequest) {
        appendField(request.type.rawValue)
        append(UInt32(clamping: request.bits))
        appendField(AttributeBlob.encode(request.attributes))
        append(request.isPermanent ? 1 as UInt8 : 0)
    }

    package mutating func append(_ use: KeyUse) {
        append(UInt8(use.operation.rawValue))
        appendField(use.algorithm.rawValue)
        switch use {
        case .sign(_, let data): appendField(data)
        case .decrypt(_, let data, let parameters):
            appendField(data)
            append(parameters)
        case .keyExchange(_, let peer, let parameters):
            appendField(peer)
            append(parameters)
        }
    }

    private mutating func append(_ parameters: KeyOperationParameters) {
        append(Int64(parameters.requestedSize ?? -1))
        appendOptional(parameters.sharedInfo)
        append(Int64(parameters.symmetricKeySizeInBits ?? -1))
        appendOptional(parameters.additionalAuthenticatedData)
    }

    package mutating func appendOptional(_ data: Data?) {
        append(data == nil ? 0 as UInt8 : 1)
        if let data { appendField(data) }
    }
}

extension ByteReader {
    package mutating func readOptional() throws(AgentProtocolError) -> Data? { try optional() }

    private mutating func optional() throws(AgentProtocolError) -> Data? {
        switch try AgentCoding.byte(&self) {
        case 0: return nil
        case 1: return try AgentCoding.field(&self)
        default: throw .malformed("a presence flag is neither 0 nor 1")
        }
    }

    private mutating func flag() throws(AgentProtocolError) -> Bool {
        switch try AgentCoding.byte(&self) {
        case 0: return false
        case 1: return true
        default: throw .malformed("a flag is neither 0 nor 1")
        }
    }

    private mutating func itemClass() throws(AgentProtocolError) -> ItemClass {
        let code = try AgentCoding.text(&self)
        guard let itemClass = ItemClass(rawValue: code) else { throw .malformed("unknown item class") }
        return itemClass
    }

    private mutating func attributes() throws(AgentProtocolError) -> [AttributeKey: AttributeValue] {
        guard let attributes = AttributeBlob.decode(try AgentCoding.field(&self)) else {
            throw .malformed("malformed attributes")
        }
        return attributes
    }

    package mutating func readStrings() throws(AgentProtocolError) -> [String] {
        let count = try AgentCoding.count(&self)
        var strings: [String] = []
        for _ in 0..<count { strings.append(try AgentCoding.text(&self)) }
        return strings
    }

    package mutating func readNewItem() throws(AgentProtocolError) -> NewItem {
        NewItem(try itemClass(), attributes: try attributes(), data: try optional())
    }

    package mutating func readItemQuery() throws(AgentProtocolError) -> ItemQuery {
        let itemClass = try itemClass()
        let matching = try attributes()
        let synchronizable: SynchronizableFilter
        switch try AgentCoding.byte(&self) {
        case 0: synchronizable = .no
        case 1: synchronizable = .yes
        case 2: synchronizable = .any
        default: throw .malformed("unknown synchronizable filter")
        }
        let reference = try optional()
        let limit: MatchLimit
        switch try AgentCoding.byte(&self) {
        case 0: limit = .one
        case 1: limit = .all
        case 2: limit = .count(Int(try AgentCoding.read(&self) { try $0.readUInt32() }))
        default: throw .malformed("unknown match limit")
        }
        let returning = ReturnOptions(rawValue: Int(try AgentCoding.read(&self) { try $0.readUInt32() }))
        let authenticationUI: AuthenticationUI
        switch try AgentCoding.byte(&self) {
        case 0: authenticationUI = .allow
        case 1: authenticationUI = .fail
        case 2: authenticationUI = .skip
        default: throw .malformed("unknown authentication UI")
        }
        let prompt = try optionalText("an operation prompt")
        var query = ItemQuery(
            itemClass, matching: matching, synchronizable: synchronizable, persistentReference: reference,
            limit: limit, returning: returning, authenticationUI: authenticationUI, operationPrompt: prompt,
            certificateMatch: try readCertificateMatch())
        query.hostOrSubdomainOf = try optionalText("a host to match")
        return query
    }

    private mutating func readCertificateMatch() throws(AgentProtocolError) -> CertificateMatch {
        var match = CertificateMatch()
        for _ in 0..<(try AgentCoding.count(&self)) { match.issuers.append(try AgentCoding.field(&self)) }
        if try flag() {
            match.validOn = Date(
                timeIntervalSinceReferenceDate: Double(bitPattern: try AgentCoding.read(&self) { try $0.readUInt64() }))
        }
        match.subjectContains = try optionalText("a subject filter")
        match.emailAddressIfPresent = try optionalText("an e-mail filter")
        match.caseInsensitive = try flag()
        match.trustedOnly = try flag()
        match.subjectStartsWith = try optionalText("a subject prefix")
        match.subjectEndsWith = try optionalText("a subject suffix")
        match.subjectWholeString = try optionalText("a subject name")
        match.diacriticInsensitive = try flag()
        match.widthInsensitive = try flag()
        switch try AgentCoding.read(&self, { try $0.readByte() }) {
        case 0: break
        case 1: match.policy = .basicX509
        case 2: match.policy = .ssl(server: true, hostname: try optionalText("a host name"))
        case 3: match.policy = .ssl(server: false, hostname: try optionalText("a host name"))
        default: throw .malformed("an unknown trust policy")
        }
        return match
    }

    private mutating func optionalText(_ what: String) throws(AgentProtocolError) -> String? {
        guard let bytes = try optional() else { return nil }
        guard let text = String(data: bytes, encoding: .utf8) else { throw .malformed("\(what) that is not UTF-8") }
        return text
    }

    package mutating func readItemChanges() throws(AgentProtocolError) -> ItemChanges {
        ItemChanges(attributes: try attributes(), data: try optional())
    }

    package mutating func readItemResult() throws(AgentProtocolError) -> ItemResult {
        let itemClass = try itemClass()
        let attributes = try attributes()
        let data = try optional()
        return ItemResult(
            itemClass: itemClass, attributes: attributes, data: data, persistentReference: try AgentCoding.field(&self))
    }

    package mutating func readSettings() throws(AgentProtocolError) -> KeychainSettings {
        let seconds = try AgentCoding.read(&self) { try $0.readInt64() }
        guard seconds >= -1, seconds <= Int64(Int.max) else { throw .malformed("settings out of range") }
        return KeychainSettings(autoLockAfterSeconds: seconds < 0 ? nil : Int(seconds), lockOnSleep: try flag())
    }

    package mutating func readRegistration() throws(AgentProtocolError) -> ApplicationRegistration {
        let path = try AgentCoding.text(&self)
        let digest = try AgentCoding.field(&self)
        let identifier = try AgentCoding.text(&self)
        return ApplicationRegistration(
            executablePath: path, executableDigest: digest, applicationIdentifier: identifier,
            accessGroups: try readStrings())
    }

    private mutating func identity() throws(AgentProtocolError) -> CallerIdentity {
        let identifier = try AgentCoding.text(&self)
        return CallerIdentity(applicationIdentifier: identifier, accessGroups: try readStrings())
    }

    package mutating func readStatus() throws(AgentProtocolError) -> KeychainServiceStatus {
        let lockState: LockState
        switch try AgentCoding.byte(&self) {
        case 0: lockState = .neverUnlocked
        case 1: lockState = .locked
        case 2: lockState = .unlocked
        default: throw .malformed("unknown lock state")
        }
        let path = try optional().map { String(decoding: $0, as: UTF8.self) }
        let pid = try AgentCoding.read(&self) { try $0.readInt64() }
        guard pid >= -1, pid <= Int64(Int32.max) else { throw .malformed("a process id out of range") }
        let caller: CallerStanding
        switch try AgentCoding.byte(&self) {
        case 0: caller = .identified(try identity())
        case 1: caller = .registered(try identity())
        case 2: caller = .unregistered
        case 3: caller = .refused(try AgentCoding.text(&self))
        case 4: caller = .unknownUntilFirstUnlock
        default: throw .malformed("unknown caller standing")
        }
        return KeychainServiceStatus(
            lockState: lockState, keychainPath: path, agentProcessIdentifier: pid < 0 ? nil : Int32(pid),
            caller: caller)
    }

    package mutating func readReply(_ shape: AgentOperation.ReplyShape) throws(AgentProtocolError) -> KeychainReply {
        switch shape {
        case .none: return .none
        case .status: return .status(try readStatus())
        case .item: return .item(try flag() ? try readItemResult() : nil)
        case .items:
            let count = try AgentCoding.count(&self)
            var items: [ItemResult] = []
            for _ in 0..<count { items.append(try readItemResult()) }
            return .items(items)
        case .count:
            let count = try AgentCoding.read(&self) { try $0.readInt64() }
            guard count >= 0 else { throw .malformed("a negative count") }
            return .count(Int(count))
        case .flag: return .flag(try flag())
        case .registration: return .registration(try readRegistration())
        case .registrations:
            let count = try AgentCoding.count(&self)
            var registrations: [ApplicationRegistration] = []
            for _ in 0..<count { registrations.append(try readRegistration()) }
            return .registrations(registrations)
        case .settings: return .settings(try readSettings())
        case .bytes: return .bytes(try AgentCoding.field(&self))
        case .identities:
            let count = try AgentCoding.count(&self)
            var matches: [IdentityMatch] = []
            for _ in 0..<count {
                matches.append(IdentityMatch(certificate: try readItemResult(), key: try readItemResult()))
            }
            return .identities(matches)
        case .located:
            let count = try AgentCoding.count(&self)
            var found: [LocatedItem] = []
            for _ in 0..<count {
                found.append(LocatedItem(reference: try AgentCoding.field(&self), isAvailable: try flag()))
            }
            return .located(found)
        case .accessLists:
            let count = try AgentCoding.count(&self)
            var lists: [ItemAccessList] = []
            for _ in 0..<count { lists.append(try readAccessList()) }
            return .accessLists(lists)
        }
    }

    /// What `append(_: TrustedProgram)` wrote.
    package mutating func readTrustedProgram() throws(AgentProtocolError) -> TrustedProgram {
        switch try AgentCoding.byte(&self) {
        case 1:
            let path = try AgentCoding.text(&self)
            return .executable(path: path, digest: try AgentCoding.field(&self))
        case 2: return .sandbox(appID: try AgentCoding.text(&self))
        case 3: return .confined(label: try AgentCoding.text(&self))
        default: throw .malformed("unknown program kind")
        }
    }

    /// What `append(_: ItemAccessList)` wrote.
    private mutating func readAccessList() throws(AgentProtocolError) -> ItemAccessList {
        let reference = try AgentCoding.field(&self)
        let itemClass = try self.itemClass()
        let summary = try optional().map { String(decoding: $0, as: UTF8.self) }
        let count = try AgentCoding.count(&self)
        var entries: [AccessListEntry] = []
        for _ in 0..<count {
            let program = try readTrustedProgram()
            let added = try AgentCoding.read(&self) { try $0.readInt64() }
            guard let origin = AccessListEntry.Origin(rawValue: try AgentCoding.byte(&self)) else {
                throw .malformed("unknown access list entry origin")
            }
            entries.append(
                AccessListEntry(program: program, added: Date(timeIntervalSince1970: Double(added)), origin: origin))
        }
        return ItemAccessList(reference: reference, itemClass: itemClass, summary: summary, entries: entries)
    }

    /// What `appendImportedKey` wrote: the private key, checked as any key from outside is, and attributes.
    package mutating func readImportedKey() throws(AgentProtocolError) -> (
        AsymmetricKey, [AttributeKey: AttributeValue]
    ) {
        guard let type = KeyType(rawValue: try AgentCoding.text(&self)) else { throw .malformed("unknown key type") }
        var bytes = try AgentCoding.field(&self)
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        let key: AsymmetricKey
        do {
            key = try AsymmetricKey(externalRepresentation: bytes, type: type, isPrivate: true)
        } catch {
            throw .malformed("the key to hold is not a private \(type.name) key")
        }
        return (key, try attributes())
    }

    package mutating func readHeldKeyRequest() throws(AgentProtocolError) -> HeldKeyRequest {
        guard let type = KeyType(rawValue: try AgentCoding.text(&self)) else { throw .malformed("unknown key type") }
        let bits = Int(try AgentCoding.read(&self) { try $0.readUInt32() })
        let attributes = try attributes()
        return HeldKeyRequest(type: type, bits: bits, attributes: attributes, isPermanent: try flag())
    }

    package mutating func readKeyUse() throws(AgentProtocolError) -> KeyUse {
        let operation = try AgentCoding.byte(&self)
        let algorithm = KeyAlgorithm(rawValue: try AgentCoding.text(&self))
        let data = try AgentCoding.field(&self)
        switch KeyOperation(rawValue: Int(operation)) {
        case .sign?: return .sign(algorithm, data)
        case .decrypt?: return .decrypt(algorithm, data, try keyParameters())
        case .keyExchange?: return .keyExchange(algorithm, peerPublicKey: data, try keyParameters())
        default: throw .malformed("a key use is sign, decrypt or key exchange")
        }
    }

    private mutating func keyParameters() throws(AgentProtocolError) -> KeyOperationParameters {
        func size(_ value: Int64) throws(AgentProtocolError) -> Int? {
            guard value >= -1, value <= Int64(Int32.max) else { throw .malformed("a key operation size out of range") }
            return value < 0 ? nil : Int(value)
        }
        let requested = try size(try AgentCoding.read(&self) { try $0.readInt64() })
        let sharedInfo = try optional()
        let symmetric = try size(try AgentCoding.read(&self) { try $0.readInt64() })
        return KeyOperationParameters(
            requestedSize: requested, sharedInfo: sharedInfo, symmetricKeySizeInBits: symmetric,
            additionalAuthenticatedData: try optional())
    }
}
