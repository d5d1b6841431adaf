import Foundation
import Testing

@testable import LatchkeySSH

/// Where a constrained key may go (OpenSSH's `permitted_by_dest_constraints`): one hop at a time, from this
/// machine or a named host, to a host known by its key, as a user matching a pattern.
@Suite struct SSHDestinationHopTests {
    static func key(_ fill: UInt8) throws -> SSHHostKey {
        try SSHHostKey(blob: SSHAgentRequestTests.hostKeyBlob(fill))
    }

    static func hop(_ host: String?, _ keys: [SSHHostKey], user: String? = nil, isCA: Bool = false)
        -> SSHDestinationConstraint.Hop
    {
        .init(user: user, hostname: host, keys: keys.map { .init(blob: $0.blob, isCA: isCA) })
    }

    @Test func fromThisMachineToOneHost() throws {
        let hostA = try Self.key(0xA)
        let hostB = try Self.key(0xB)
        let constraint = SSHDestinationConstraint(from: Self.hop(nil, []), to: Self.hop("hosta", [hostA], user: "git"))
        #expect(constraint.permits(from: nil, to: hostA, user: Data("git".utf8)))
        #expect(!constraint.permits(from: nil, to: hostB, user: Data("git".utf8)))
        #expect(!constraint.permits(from: nil, to: hostA, user: Data("root".utf8)))
        // From a host the agent was forwarded to: not this hop, whatever the destination.
        #expect(!constraint.permits(from: hostB, to: hostA, user: Data("git".utf8)))
        // Where the key may go next, when the destination is not known yet: the user is not asked.
        #expect(constraint.permits(from: nil, to: nil, user: nil))
        #expect(constraint.summary == "git@hosta")
    }

    @Test func aLaterHopNamesItsOrigin() throws {
        let hostA = try Self.key(0xA)
        let hostB = try Self.key(0xB)
        let constraint = SSHDestinationConstraint(from: Self.hop("hosta", [hostA]), to: Self.hop("hostb", [hostB]))
        #expect(constraint.permits(from: hostA, to: hostB, user: Data("any".utf8)))
        #expect(!constraint.permits(from: nil, to: hostB, user: nil))
        #expect(!constraint.permits(from: hostB, to: hostB, user: nil))
        #expect(constraint.summary == "hosta>hostb")
    }

    @Test func userPatternsMatchAsOpenSSHs() throws {
        let hostA = try Self.key(0xA)
        let constraint = SSHDestinationConstraint(
            from: Self.hop(nil, []), to: Self.hop("hosta", [hostA], user: "de?-*"))
        #expect(constraint.permits(from: nil, to: hostA, user: Data("dev-alice".utf8)))
        #expect(!constraint.permits(from: nil, to: hostA, user: Data("ops-alice".utf8)))
        #expect(constraint.permits(from: nil, to: hostA, user: Data([0x64, 0x65, 0xFF, 0x2D])))
    }

    @Test func aKeyListedAsAnAuthorityIsNotAHostKey() throws {
        let hostA = try Self.key(0xA)
        let constraint = SSHDestinationConstraint(from: Self.hop(nil, []), to: Self.hop("hosta", [hostA], isCA: true))
        // A plain host key matches only a key listed as a host's, never one listed as an authority.
        #expect(!constraint.permits(from: nil, to: hostA, user: nil))
    }

    @Test func theFirstConstraintThatAllowsTheHopNamesIt() throws {
        let hostA = try Self.key(0xA)
        let hostB = try Self.key(0xB)
        let hostC = try Self.key(0xC)
        let list = [
            SSHDestinationConstraint(from: Self.hop(nil, []), to: Self.hop("hosta", [hostA])),
            SSHDestinationConstraint(from: Self.hop(nil, []), to: Self.hop("hostb", [hostB])),
        ]
        #expect(list.permittedHop(from: nil, to: hostB, user: nil) == .some("hostb"))
        #expect(list.permittedHop(from: nil, to: hostC, user: nil) == nil)
    }

    @Test func constraintsSurviveTheStoredSettings() throws {
        let hostA = try Self.key(0xA)
        let constraint = SSHDestinationConstraint(from: Self.hop(nil, []), to: Self.hop("hosta", [hostA], user: "git"))
        let data = try JSONEncoder().encode([constraint])
        #expect(try JSONDecoder().decode([SSHDestinationConstraint].self, from: data) == [constraint])
    }
}
