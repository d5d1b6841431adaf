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

    /// Expects `made` to be a Secure Enclave P-256 key made in the TPM (its attributes say so and are a held
    /// key's) whose signature OpenSSL verifies; returns its public key.
    static func expectMadeInTheTPMAndVerifiedByOpenSSL(
        _ made: ItemResult, _ keychain: KeychainDatabase, _ directory: TemporaryDirectory
    ) throws -> AsymmetricKey {
        #expect(made.attributes[.tokenID] == .string(HeldKeyRequest.secureEnclaveTokenID))
        #expect(made.attributes[.keyStorage] == .string("tpm"))
        #expect(made.attributes[.keySizeInBits] == .number(256))
        #expect(made.attributes["extr"] == .number(0) && made.attributes["sens"] == .number(1))
        let publicKey = try publicKey(made)
        #expect(made.attributes[.applicationLabel] == .data(publicKey.applicationLabel))
        let message = Data("pay 10 to bob".utf8)
        let signature = try sign(keychain, made.persistentReference, message)
        try expectOpenSSLVerifies(signature, of: message, by: publicKey, in: directory)
        return publicKey
    }

    /// Expects `openssl dgst -sha256 -verify` to verify `signature` (DER ECDSA) of `message` by `publicKey`,
    /// with its files in `directory`'s `openssl` folder.
    static func expectOpenSSLVerifies(
        _ signature: Data, of message: Data, by publicKey: AsymmetricKey, in directory: TemporaryDirectory
    ) throws {
        try FileManager.default.createDirectory(atPath: directory.file("openssl"), withIntermediateDirectories: true)
        let pem = directory.file("openssl/public.pem")
        try publicKey.publicKeyPEM().write(toFile: pem, atomically: true, encoding: .utf8)
        try message.write(to: URL(fileURLWithPath: directory.file("openssl/message")))
        try signature.write(to: URL(fileURLWithPath: directory.file("openssl/signature.der")))
        let verified = try HelperProcess.run(
            "/usr/bin/openssl",
            [
                "dgst", "-sha256", "-verify", pem, "-signature", directory.file("openssl/signature.der"),
                directory.file("openssl/message"),
            ], environment: ["PATH": "/usr/bin:/bin"])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdout == "Verified OK\n")
    }

    /// Expects the key `reference` names to derive with ECDH and ECDHC what a new software peer derives
    /// with `publicKey`; returns that peer.
    @discardableResult
    static func expectECDHAgrees(_ keychain: KeychainDatabase, _ reference: Data, _ publicKey: AsymmetricKey) throws
        -> AsymmetricKey
    {
        let peer = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        for name in ["algid:keyexchange:ECDH", "algid:keyexchange:ECDHC"] {
            let algorithm = KeyAlgorithm(rawValue: name)
            let shared = try keychain.useHeldKey(
                reference, for: .keyExchange(algorithm, peerPublicKey: peer.publicKeyData, KeyOperationParameters()),
                caller: Fixture.app)
            #expect(shared.count == 32)
            #expect(shared == (try peer.keyExchange(algorithm, with: publicKey)))
        }
        return peer
    }

    /// Expects the key `reference` names to decrypt what `publicKey` encrypts with both ECIES variants.
    static func expectECIESDecrypts(_ keychain: KeychainDatabase, _ reference: Data, _ publicKey: AsymmetricKey)
        throws
    {
        for name in [
            "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV", "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM",
        ] {
            let algorithm = KeyAlgorithm(rawValue: name)
            let ciphertext = try publicKey.encrypt(algorithm, Data("for the TPM".utf8))
            #expect(
                try keychain.useHeldKey(
                    reference, for: .decrypt(algorithm, ciphertext, KeyOperationParameters()), caller: Fixture.app)
                    == Data("for the TPM".utf8))
        }
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
