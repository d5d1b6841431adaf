package import FoundationEssentials
package import LatchkeyEngine
internal import LatchkeyPKI

/// The operations of the agent protocol, with their codes and what each needs and answers: one table, so
/// the request decoder, the reply decoder and the agent's policy cannot disagree.
package enum AgentOperation: UInt8, CaseIterable, Sendable {
    case hello = 1
    case status, unlock, lock, add, copyMatching, update, delete, addOrUpdate, register, unregister,
        listRegistrations, updateSettings, settings, createHeldKey, useHeldKey, copyIdentities, releaseHeldKey,
        unlockUnattended, locate, importHeldKey, accessLists, grantAccess, revokeAccess, unlockDerived

    /// The shape of a successful reply's value.
    package enum ReplyShape: Sendable {
        case none, status, item, items, count, flag, registration, registrations, settings, bytes, identities,
            located, accessLists
    }

    /// The operation's table row: its reply's shape, and whether the agent must know exactly which program
    /// sends it (item operations run as that program; the others need only the user, or the passphrase).
    package var row: (reply: ReplyShape, needsIdentity: Bool) {
        switch self {
        case .hello, .unlock, .lock, .updateSettings, .unlockUnattended, .unlockDerived: (.none, false)
        case .releaseHeldKey: (.none, true)
        case .status: (.status, false)
        case .add, .createHeldKey, .importHeldKey: (.item, true)
        case .useHeldKey: (.bytes, true)
        case .copyMatching: (.items, true)
        case .locate: (.located, true)
        case .copyIdentities: (.identities, true)
        case .update, .delete: (.count, true)
        case .addOrUpdate: (.flag, true)
        case .register: (.registration, false)
        case .unregister, .grantAccess, .revokeAccess: (.flag, false)
        case .listRegistrations: (.registrations, false)
        case .accessLists: (.accessLists, false)
        case .settings: (.settings, false)
        }
    }
}

/// A request to the agent: the greeting's answer, the unattended unlock pam_latchkey asks for, or a
/// `KeychainRequest` — the seam's own value, which the agent runs as the program that sent it.
package enum AgentRequest: Sendable {
    /// The client's first message: which keychain it wants (empty: whichever the agent serves, as
    /// pam_latchkey asks), and the challenge of the agent's greeting.
    case hello(keychainPath: String, challenge: [UInt8])
    /// Unlock through the keychain's unattended TPM unlock (`tpm enroll --unattended`), no passphrase: what
    /// pam_latchkey asks at a login that typed no password. Any program of the user could unseal it anyway.
    case unlockUnattended
    /// Unlock with the key the login's password derives (`DerivedUnlockKey`), which the `latchkey` tool
    /// derived at the login's auth step: what pam_latchkey hands over in place of the password when it has
    /// it. The agent takes it from root's hand-over only.
    case unlockDerived(DerivedUnlockKey)
    /// A keychain operation (`KeychainService.perform`).
    case keychain(KeychainRequest)

    /// The request's operation.
    package var operation: AgentOperation {
        switch self {
        case .hello: .hello
        case .unlockUnattended: .unlockUnattended
        case .unlockDerived: .unlockDerived
        case .keychain(let request): request.operation
        }
    }

    /// Whether the agent must know exactly which program sends it (see `AgentOperation.row`).
    package var needsIdentity: Bool { operation.row.needsIdentity }

    /// Whether the agent may ask the user (pinentry) before it answers: a read of secrets or a change that
    /// may meet an item whose access control asks them.
    package var mayAskTheUser: Bool {
        guard case .keychain(let request) = self else { return false }
        switch request {
        case .copyMatching(let query):
            return query.authenticationUI == .allow && !query.returning.isDisjoint(with: [.data, .reference])
        case .update(let query, _): return query.authenticationUI == .allow
        case .copyIdentities(_, let keys, _):
            return keys.authenticationUI == .allow && !keys.returning.isDisjoint(with: [.data, .reference])
        case .addOrUpdate, .useHeldKey: return true
        default: return false
        }
    }

    /// The message: "LK", version, request id, operation, body.
    package func encoded(id: UInt32) -> Data {
        var writer = ByteWriter(capacity: 256)
        AgentCoding.writeHeader(&writer, id: id, operation: operation)
        switch self {
        case .hello(let path, let challenge):
            writer.appendField(path)
            writer.appendField(Data(challenge))
        case .unlockUnattended: break
        case .unlockDerived(let key):
            key.withEncoded { bytes in
                writer.append(UInt32(bytes.count))
                writer.appendRaw(bytes)
            }
        case .keychain(let request): Self.encode(request, into: &writer)
        }
        return writer.data
    }

    private static func encode(_ request: KeychainRequest, into writer: inout ByteWriter) {
        switch request {
        case .status, .lock, .listRegistrations, .settings: break
        case .unlock(let passphrase): writer.appendField(passphrase)
        case .add(let item, let returning):
            writer.append(item)
            writer.append(UInt32(truncatingIfNeeded: returning.rawValue))
        case .copyMatching(let query), .delete(let query), .locate(let query): writer.append(query)
        case .update(let query, let changes):
            writer.append(query)
            writer.append(changes)
        case .addOrUpdate(let item): writer.append(item)
        case .register(let path, let identifier, let groups, let passphrase):
            writer.appendField(passphrase)
            writer.appendField(path)
            writer.appendField(identifier)
            writer.append(groups)
        case .unregister(let path, let passphrase):
            writer.appendField(passphrase)
            writer.appendField(path)
        case .accessLists(let reference):
            writer.appendOptional(reference)
        case .grantAccess(let program, let reference, let passphrase),
            .revokeAccess(let program, let reference, let passphrase):
            writer.appendField(passphrase)
            writer.append(program)
            writer.appendField(reference)
        case .updateSettings(let settings, let passphrase):
            writer.appendField(passphrase)
            writer.append(settings)
        case .createHeldKey(let held, let returning):
            writer.append(held)
            writer.append(UInt32(truncatingIfNeeded: returning.rawValue))
        case .useHeldKey(let reference, let use):
            writer.appendField(reference)
            writer.append(use)
        case .importHeldKey(let key, let attributes, let returning):
            writer.appendImportedKey(key, attributes: attributes)
            writer.append(UInt32(truncatingIfNeeded: returning.rawValue))
        case .releaseHeldKey(let reference):
            writer.appendField(reference)
        case .copyIdentities(let certificates, let keys, let limit):
            writer.append(certificates)
            writer.append(keys)
            writer.append(UInt32(clamping: limit ?? 0))  // 0: no limit (a given limit is at least 1).
        }
    }

    /// Decodes a message; refuses anything malformed, including trailing bytes.
    package static func decode(_ message: Data) throws(AgentProtocolError) -> (id: UInt32, request: AgentRequest) {
        try AgentCoding.reading(message) { (reader) throws(AgentProtocolError) in
            let (id, operation) = try AgentCoding.readHeader(&reader, what: "agent message")
            let request: KeychainRequest
            switch operation {
            case .hello:
                let path = try AgentCoding.text(&reader)
                return (id, .hello(keychainPath: path, challenge: Array(try AgentCoding.field(&reader))))
            case .unlockUnattended: return (id, .unlockUnattended)
            case .unlockDerived: return (id, .unlockDerived(try AgentCoding.derivedKey(&reader)))
            case .status: request = .status
            case .unlock: request = .unlock(try AgentCoding.passphrase(&reader))
            case .lock: request = .lock
            case .add:
                let item = try reader.readNewItem()
                request = .add(
                    item, returning: ReturnOptions(rawValue: Int(try AgentCoding.read(&reader) { try $0.readUInt32() }))
                )
            case .copyMatching: request = .copyMatching(try reader.readItemQuery())
            case .locate: request = .locate(try reader.readItemQuery())
            case .update: request = .update(try reader.readItemQuery(), try reader.readItemChanges())
            case .delete: request = .delete(try reader.readItemQuery())
            case .addOrUpdate: request = .addOrUpdate(try reader.readNewItem())
            case .register:
                let passphrase = try AgentCoding.passphrase(&reader)
                let path = try AgentCoding.text(&reader)
                let identifier = try AgentCoding.text(&reader)
                request = .register(
                    executablePath: path, applicationIdentifier: identifier, accessGroups: try reader.readStrings(),
                    passphrase: passphrase)
            case .unregister:
                let passphrase = try AgentCoding.passphrase(&reader)
                request = .unregister(executablePath: try AgentCoding.text(&reader), passphrase: passphrase)
            case .listRegistrations: request = .listRegistrations
            case .accessLists: request = .accessLists(reference: try reader.readOptional())
            case .grantAccess, .revokeAccess:
                let passphrase = try AgentCoding.passphrase(&reader)
                let program = try reader.readTrustedProgram()
                let reference = try AgentCoding.field(&reader)
                request =
                    operation == .grantAccess
                    ? .grantAccess(program, reference: reference, passphrase: passphrase)
                    : .revokeAccess(program, reference: reference, passphrase: passphrase)
            case .updateSettings:
                let passphrase = try AgentCoding.passphrase(&reader)
                request = .updateSettings(try reader.readSettings(), passphrase: passphrase)
            case .settings: request = .settings
            case .createHeldKey:
                let held = try reader.readHeldKeyRequest()
                request = .createHeldKey(
                    held, returning: ReturnOptions(rawValue: Int(try AgentCoding.read(&reader) { try $0.readUInt32() }))
                )
            case .useHeldKey:
                let reference = try AgentCoding.field(&reader)
                request = .useHeldKey(reference: reference, use: try reader.readKeyUse())
            case .releaseHeldKey:
                request = .releaseHeldKey(reference: try AgentCoding.field(&reader))
            case .importHeldKey:
                let (key, attributes) = try reader.readImportedKey()
                request = .importHeldKey(
                    key, attributes: attributes,
                    returning: ReturnOptions(rawValue: Int(try AgentCoding.read(&reader) { try $0.readUInt32() })))
            case .copyIdentities:
                let certificates = try reader.readItemQuery()
                let keys = try reader.readItemQuery()
                let limit = Int(try AgentCoding.read(&reader) { try $0.readUInt32() })
                request = .copyIdentities(certificates: certificates, keys: keys, limit: limit == 0 ? nil : limit)
            }
            return (id, .keychain(request))
        }
    }
}

extension KeychainRequest {
    /// The agent protocol's code for the request.
    package var operation: AgentOperation {
        switch self {
        case .status: .status
        case .unlock: .unlock
        case .lock: .lock
        case .add: .add
        case .copyMatching: .copyMatching
        case .locate: .locate
        case .update: .update
        case .delete: .delete
        case .addOrUpdate: .addOrUpdate
        case .register: .register
        case .unregister: .unregister
        case .listRegistrations: .listRegistrations
        case .accessLists: .accessLists
        case .grantAccess: .grantAccess
        case .revokeAccess: .revokeAccess
        case .updateSettings: .updateSettings
        case .settings: .settings
        case .createHeldKey: .createHeldKey
        case .useHeldKey: .useHeldKey
        case .copyIdentities: .copyIdentities
        case .releaseHeldKey: .releaseHeldKey
        case .importHeldKey: .importHeldKey
        }
    }
}

extension KeychainReply {
    var shape: AgentOperation.ReplyShape {
        switch self {
        case .none: .none
        case .status: .status
        case .item: .item
        case .items: .items
        case .count: .count
        case .flag: .flag
        case .registration: .registration
        case .registrations: .registrations
        case .settings: .settings
        case .bytes: .bytes
        case .identities: .identities
        case .located: .located
        case .accessLists: .accessLists
        }
    }
}

/// The agent's answer to one request: Apple's status, and the reply's value on success or a detail on
/// failure.
package struct AgentResponse: Sendable, Equatable {
    /// The request's id (0 for a refusal that ends the connection).
    package let id: UInt32
    /// The operation answered (`hello` for a refusal before any request was understood).
    package let operation: AgentOperation
    /// The outcome: success, or the failure with Apple's status and its detail.
    package let outcome: Result<KeychainReply, KeychainError>

    /// A response.
    package init(id: UInt32, operation: AgentOperation, outcome: Result<KeychainReply, KeychainError>) {
        self.id = id
        self.operation = operation
        self.outcome = outcome
    }

    /// A failure.
    package init(id: UInt32, operation: AgentOperation, failure: KeychainError) {
        self.init(id: id, operation: operation, outcome: .failure(failure))
    }

    /// The message: "LK", version, id, operation, status, then the detail (failure) or the value (success).
    package func encoded() -> Data {
        var writer = ByteWriter(capacity: 64)
        AgentCoding.writeHeader(&writer, id: id, operation: operation)
        switch outcome {
        case .failure(let error):
            writer.append(
                UInt32(
                    bitPattern: error.status.rawValue == 0 ? KeychainStatus.internal.rawValue : error.status.rawValue))
            writer.appendField(error.detail ?? "")
        case .success(let reply):
            writer.append(UInt32(0))
            writer.append(reply)
        }
        return writer.data
    }

    /// Decodes a response; the value must have the shape its operation answers with.
    package static func decode(_ message: Data) throws(AgentProtocolError) -> AgentResponse {
        try AgentCoding.reading(message) { (reader) throws(AgentProtocolError) in
            let (id, operation) = try AgentCoding.readHeader(&reader, what: "agent response")
            let status = KeychainStatus(
                rawValue: Int32(bitPattern: try AgentCoding.read(&reader) { try $0.readUInt32() }))
            guard status == .success else {
                let detail = try AgentCoding.text(&reader)
                return AgentResponse(
                    id: id, operation: operation, failure: KeychainError(status, detail.isEmpty ? nil : detail))
            }
            return AgentResponse(
                id: id, operation: operation, outcome: .success(try reader.readReply(operation.row.reply)))
        }
    }

    /// The reply's value, or the failure as a `KeychainError`.
    package func reply() throws(KeychainError) -> KeychainReply { try outcome.get() }
}
