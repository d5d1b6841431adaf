import Foundation
import LatchkeyCrypto
import LatchkeySSH
import Testing

/// `SSHAgentRequest.decode`: every message the agent serves read field by field, what it does not serve
/// decoded as unsupported (answered with a failure), and malformed bodies refused with the field they broke.
@Suite struct SSHAgentRequestTests {
    /// RFC 8032's first Ed25519 test vector: the seed and its public key.
    static let seed: [UInt8] = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    static let publicKey: [UInt8] = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")

    static func hex(_ text: String) -> [UInt8] { Hex.decode(text)! }

    static func message(_ type: UInt8, _ build: (inout SSHWriter) -> Void = { _ in }) -> Data {
        var writer = SSHWriter()
        writer.byte(type)
        build(&writer)
        return writer.data
    }

    /// An Ed25519 public key blob (any 32 bytes name a host key here).
    static func hostKeyBlob(_ fill: UInt8) -> Data {
        var writer = SSHWriter()
        writer.string("ssh-ed25519")
        writer.string([UInt8](repeating: fill, count: 32))
        return writer.data
    }

    /// `ssh-add`'s add of the test vector's key with `constraints` after the comment.
    static func addition(_ constraints: (inout SSHWriter) -> Void) -> Data {
        message(SSHAgentMessageNumber.addIdentityConstrained) { writer in
            writer.string("ssh-ed25519")
            writer.string(publicKey)
            writer.string(seed + publicKey)
            writer.string("alice@laptop")
            constraints(&writer)
        }
    }

    /// One hop of a destination constraint: user, host name, the reserved string, then (key, is-CA) pairs.
    static func hop(user: String = "", host: String = "", keys: [(Data, Bool)] = [], reserved: [UInt8] = []) -> Data {
        var writer = SSHWriter()
        writer.string(user)
        writer.string(host)
        writer.string(reserved)
        for (blob, isCA) in keys {
            writer.string(blob)
            writer.boolean(isCA)
        }
        return writer.data
    }

    static func destinations(_ constraints: [(from: Data, to: Data)]) -> (inout SSHWriter) -> Void {
        { writer in
            writer.byte(SSHAgentMessageNumber.constrainExtension)
            writer.string("restrict-destination-v00@openssh.com")
            var list = SSHWriter()
            for constraint in constraints {
                var one = SSHWriter()
                one.string(constraint.from)
                one.string(constraint.to)
                one.string(Data())
                list.string(one.data)
            }
            writer.string(list.data)
        }
    }

    static func addError(_ constraints: (inout SSHWriter) -> Void) -> SSHWireError? {
        do {
            _ = try SSHAgentRequest.decode(addition(constraints))
            return nil
        } catch {
            return error
        }
    }

    @Test func aSignRequestIsReadWhole() throws {
        let request = try SSHAgentRequest.decode(
            Self.message(SSHAgentMessageNumber.signRequest) {
                $0.string(Self.hostKeyBlob(1))
                $0.string("data")
                $0.uint32(4)
            })
        guard case .sign(let key, let data, let flags) = request else {
            Issue.record("decoded as \(request)")
            return
        }
        #expect(key == Self.hostKeyBlob(1))
        #expect(data == Data("data".utf8))
        #expect(flags == 4)
    }

    @Test func aSignRequestWithBytesLeftOverIsRefused() {
        let message = Self.message(SSHAgentMessageNumber.signRequest) {
            $0.string(Self.hostKeyBlob(1))
            $0.string("data")
            $0.uint32(0)
            $0.byte(0)
        }
        #expect(throws: SSHWireError("1 bytes follow the sign request")) { try SSHAgentRequest.decode(message) }
        let short = Self.message(SSHAgentMessageNumber.signRequest) { $0.string(Self.hostKeyBlob(1)) }
        #expect(throws: SSHWireError("the data to sign is cut short")) { try SSHAgentRequest.decode(short) }
    }

    @Test func simpleRequests() throws {
        guard case .requestIdentities = try SSHAgentRequest.decode(Self.message(11)) else {
            Issue.record("not a list request")
            return
        }
        guard case .removeAll(version1: true) = try SSHAgentRequest.decode(Self.message(9)),
            case .removeAll(version1: false) = try SSHAgentRequest.decode(Self.message(19))
        else {
            Issue.record("not the two remove-all forms")
            return
        }
        guard case .remove(let blob) = try SSHAgentRequest.decode(Self.message(18) { $0.string(Self.hostKeyBlob(2)) })
        else {
            Issue.record("not a remove")
            return
        }
        #expect(blob == Self.hostKeyBlob(2))
        #expect(throws: SSHWireError("1 bytes follow the request")) {
            try SSHAgentRequest.decode(Self.message(11) { $0.byte(0) })
        }
        #expect(throws: SSHWireError("the message type is missing")) { try SSHAgentRequest.decode(Data()) }
    }

    @Test func unservedMessagesAndExtensionsAreNamed() throws {
        guard case .unsupported(1) = try SSHAgentRequest.decode(Self.message(1)) else {
            Issue.record("SSH-1's list is not unsupported")
            return
        }
        guard case .queryExtensions = try SSHAgentRequest.decode(Self.message(27) { $0.string("query") }) else {
            Issue.record("not the query extension")
            return
        }
        let long = String(repeating: "x", count: 300)
        guard case .unknownExtension(let name) = try SSHAgentRequest.decode(Self.message(27) { $0.string(long) })
        else {
            Issue.record("not an unknown extension")
            return
        }
        #expect(name == String(repeating: "x", count: 128))
    }

    @Test func lockAndUnlockCarryThePassphrase() throws {
        guard case .lock(let passphrase) = try SSHAgentRequest.decode(Self.message(22) { $0.string("correct horse") })
        else {
            Issue.record("not a lock")
            return
        }
        #expect(passphrase.withUnsafeBytes { Array($0) } == Array("correct horse".utf8))
        guard case .unlock = try SSHAgentRequest.decode(Self.message(23) { $0.string("x") }) else {
            Issue.record("not an unlock")
            return
        }
        #expect(throws: SSHWireError("1 bytes follow the passphrase")) {
            try SSHAgentRequest.decode(
                Self.message(22) {
                    $0.string("x")
                    $0.byte(1)
                })
        }
    }

    @Test func aSessionBindIsReadWithItsHost() throws {
        let request = try SSHAgentRequest.decode(
            Self.message(27) {
                $0.string("session-bind@openssh.com")
                $0.string(Self.hostKeyBlob(3))
                $0.string([UInt8](repeating: 7, count: 32))
                $0.string("signature")
                $0.boolean(true)
            })
        guard case .sessionBind(let binding) = request else {
            Issue.record("decoded as \(request)")
            return
        }
        #expect(binding.hostKey.blob == Self.hostKeyBlob(3))
        #expect(binding.sessionID == Data(repeating: 7, count: 32))
        #expect(binding.isForwarding)
        // Not signed by that host: the agent checks it before it believes the binding.
        #expect(!binding.isSignedByHost)
    }

    /// A bind whose body cannot be read is still a bind attempted (the connection is remote from then on).
    @Test(arguments: [
        (Data(), "the host key is cut short"),
        (SSHAgentRequestTests.bindBody(sessionID: []), "a session identifier is 1 to 128 bytes, not 0"),
        (
            SSHAgentRequestTests.bindBody(sessionID: [UInt8](repeating: 1, count: 129)),
            "a session identifier is 1 to 128 bytes, not 129"
        ),
        (SSHAgentRequestTests.bindBody(sessionID: [1], trailing: [0]), "1 bytes follow the session binding"),
    ])
    func anUnreadableSessionBindIsStillABind(body: Data, reason: String) throws {
        var message = Self.message(27) { $0.string("session-bind@openssh.com") }
        message.append(body)
        guard case .unreadableSessionBind(let error) = try SSHAgentRequest.decode(message) else {
            Issue.record("not counted as a bind attempted")
            return
        }
        #expect(error == SSHWireError(reason))
    }

    static func bindBody(sessionID: [UInt8], trailing: [UInt8] = []) -> Data {
        var writer = SSHWriter()
        writer.string(hostKeyBlob(4))
        writer.string(sessionID)
        writer.string("signature")
        writer.boolean(false)
        writer.raw(trailing)
        return writer.data
    }

    @Test func anAddCarriesItsKeyCommentAndConstraints() throws {
        let hostA = Self.hostKeyBlob(0xA)
        let request = try SSHAgentRequest.decode(
            Self.addition { writer in
                writer.byte(SSHAgentMessageNumber.constrainLifetime)
                writer.uint32(600)
                writer.byte(SSHAgentMessageNumber.constrainConfirm)
                Self.destinations([(from: Self.hop(), to: Self.hop(user: "git", host: "hosta", keys: [(hostA, false)]))]
                )(
                    &writer)
            })
        guard case .add(let addition) = request else {
            Issue.record("decoded as \(request)")
            return
        }
        #expect(addition.comment == "alice@laptop")
        #expect(addition.privateKey.publicKey.algorithmName == "ssh-ed25519")
        #expect(addition.privateKey.publicKey.keyData == Data(Self.publicKey))
        #expect(addition.constraints.lifetimeSeconds == 600)
        #expect(addition.constraints.confirm)
        #expect(addition.constraints.destinations.map(\.summary) == ["git@hosta"])
        #expect(addition.constraints.destinations.first?.to.keys == [.init(blob: hostA, isCA: false)])
    }

    @Test func aKeyThatIsNotItsOwnPublicHalfIsRefused() {
        let mismatched = Self.message(SSHAgentMessageNumber.addIdentity) { writer in
            writer.string("ssh-ed25519")
            writer.string([UInt8](repeating: 9, count: 32))
            writer.string(Self.seed + Self.publicKey)
            writer.string("c")
        }
        #expect(
            throws: SSHWireError("the ssh-ed25519 key is not valid: the Ed25519 private key is not its public key's")
        ) { try SSHAgentRequest.decode(mismatched) }
        let short = Self.message(SSHAgentMessageNumber.addIdentity) { writer in
            writer.string("ssh-ed25519")
            writer.string(Self.publicKey)
            writer.string(Self.seed)
            writer.string("c")
        }
        #expect(throws: SSHWireError("an Ed25519 key's parts have the wrong sizes")) {
            try SSHAgentRequest.decode(short)
        }
        let dsa = Self.message(SSHAgentMessageNumber.addIdentity) { $0.string("ssh-dss") }
        #expect(throws: SSHWireError("keys of type ssh-dss are not supported")) { try SSHAgentRequest.decode(dsa) }
    }

    @Test func constraintsGivenTwiceOrUnknownAreRefused() {
        #expect(
            Self.addError {
                $0.byte(1)
                $0.uint32(5)
                $0.byte(1)
                $0.uint32(6)
            } == SSHWireError("the lifetime is given twice"))
        #expect(
            Self.addError {
                $0.byte(2)
                $0.byte(2)
            } == SSHWireError("confirmation is asked twice"))
        #expect(Self.addError { $0.byte(7) } == SSHWireError("the constraint 7 is not supported"))
        #expect(
            Self.addError {
                $0.byte(255)
                $0.string("sk-provider@openssh.com")
            } == SSHWireError("the constraint sk-provider@openssh.com is not supported"))
        let once = Self.destinations([
            (from: Self.hop(), to: Self.hop(host: "hosta", keys: [(Self.hostKeyBlob(0xA), false)]))
        ])
        #expect(
            Self.addError {
                once(&$0)
                once(&$0)
            } == SSHWireError("destination constraints are given twice"))
    }

    @Test func malformedDestinationsAreRefused() {
        let hostA = Self.hostKeyBlob(0xA)
        func refusal(from: Data, to: Data) -> SSHWireError? { Self.addError(Self.destinations([(from: from, to: to)])) }
        #expect(
            refusal(from: Self.hop(host: "hostb"), to: Self.hop(host: "hosta", keys: [(hostA, false)]))
                == SSHWireError("the constraint's origin is inconsistent"))
        #expect(
            refusal(from: Self.hop(user: "root"), to: Self.hop(host: "hosta", keys: [(hostA, false)]))
                == SSHWireError("the constraint's origin is inconsistent"))
        #expect(
            refusal(from: Self.hop(), to: Self.hop(host: "hosta"))
                == SSHWireError("the constraint's destination is incomplete"))
        #expect(
            refusal(from: Self.hop(), to: Self.hop(host: "hosta", keys: [(hostA, false)], reserved: [1]))
                == SSHWireError("the constraint has extensions, which are not supported"))
        #expect(
            refusal(
                from: Self.hop(),
                to: Self.hop(user: String(repeating: "u", count: 257), host: "hosta", keys: [(hostA, false)]))
                == SSHWireError("the user pattern is too long"))
        var certificate = SSHWriter()
        certificate.string("ssh-ed25519-cert-v01@openssh.com")
        #expect(
            refusal(from: Self.hop(), to: Self.hop(host: "hosta", keys: [(certificate.data, true)]))
                == SSHWireError("a constraint's key is a certificate"))
    }

    @Test func atMost1024DestinationsPerKey() {
        let hostA = Self.hostKeyBlob(0xA)
        let many = Array(
            repeating: (from: Self.hop(), to: Self.hop(host: "hosta", keys: [(hostA, false)])), count: 1025)
        #expect(Self.addError(Self.destinations(many)) == SSHWireError("more than 1024 destination constraints"))
        #expect(Self.addError(Self.destinations(Array(many.prefix(1024)))) == nil)
    }

    @Test func repliesAreFramedBodies() {
        #expect(Array(SSHAgentReply.success) == [6])
        #expect(Array(SSHAgentReply.failure) == [5])
        #expect(Array(SSHAgentReply.extensionFailure) == [28])
        #expect(Array(SSHAgentReply.signature(Data([1, 2]))) == [14, 0, 0, 0, 2, 1, 2])
        #expect(
            Array(SSHAgentReply.identities([(blob: Data([9]), comment: "k")]))
                == [12, 0, 0, 0, 1, 0, 0, 0, 1, 9, 0, 0, 0, 1, 0x6B])
        #expect(
            Array(SSHAgentReply.extensions(["query"])) == [29, 0, 0, 0, 5] + Array("query".utf8) + [0, 0, 0, 5]
                + Array("query".utf8))
    }
}
