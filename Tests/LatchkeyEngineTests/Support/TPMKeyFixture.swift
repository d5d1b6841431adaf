import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// Keys made in a test's own TPM: a `kSecAttrTokenIDSecureEnclave` P-256 key made while `TPMAddress.scoped`
/// names that TPM, the operations run in the same scope, and a proxy that makes the TPM vanish mid-call.
enum TPMKeyFixture {
    static let tag = AttributeValue.data(Data("com.example.tpm-key".utf8))
    static let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")

    /// Makes a stored Secure Enclave key of `bits` bits with `tag` as its application tag.
    static func make(
        _ keychain: KeychainDatabase, tag: AttributeValue = tag, bits: Int = 256,
        extra: [AttributeKey: AttributeValue] = [:]
    ) throws -> ItemResult {
        var attributes: [AttributeKey: AttributeValue] = [
            .applicationTag: tag, .tokenID: .string(HeldKeyRequest.secureEnclaveTokenID),
        ]
        attributes.merge(extra) { _, new in new }
        return try #require(
            try keychain.createHeldKey(
                HeldKeyRequest(type: .ellipticCurve, bits: bits, attributes: attributes), caller: Fixture.app,
                returning: [.attributes, .data]))
    }

    /// The public half a creation returned.
    static func publicKey(_ made: ItemResult) throws -> AsymmetricKey {
        try AsymmetricKey(externalRepresentation: try #require(made.data), type: .ellipticCurve, isPrivate: false)
    }

    /// The item's stored form (what only `useHeldKey` reads).
    static func stored(_ keychain: KeychainDatabase, _ reference: Data) throws -> Data {
        let found = try #require(
            try keychain.copyMatching(
                ItemQuery(.key, persistentReference: reference, returning: [.data]), caller: Fixture.app,
                presence: nil, progress: nil, releasingHeldKeys: true
            ).first)
        return try #require(found.data)
    }

    /// Signs `message` with the key `reference` names.
    static func sign(_ keychain: KeychainDatabase, _ reference: Data, _ message: Data) throws -> Data {
        try keychain.useHeldKey(reference, for: .sign(ecdsa, message), caller: Fixture.app)
    }

    /// A TCTI string no TPM answers at.
    static func nowhere(_ directory: TemporaryDirectory) -> String { "swtpm:path=\(directory.file("no-tpm.sock"))" }

    /// A proxy in front of `tpm` that cuts the connection at its `cut`-th command (Tests/Tools/tpm-cut-proxy.py).
    static func proxy(_ tpm: SoftwareTPM, cut: Int, log: String) throws -> (SpawnedProcess, tcti: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tools/tpm-cut-proxy.py").path
        let socket = log + ".sock"
        let process = try SpawnedProcess(
            "/usr/bin/python3", [script, socket, tpm.socketPath, String(cut)],
            environment: ["PATH": "/usr/bin:/bin"], log: log)
        try waitUntil("the proxy listens") {
            (try? String(contentsOfFile: log, encoding: .utf8))?.contains("ready") == true
        }
        return (process, "swtpm:path=\(socket)")
    }
}
