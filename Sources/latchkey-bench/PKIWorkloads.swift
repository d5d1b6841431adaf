import Foundation
import Latchkey

/// `latchkey-bench --pki`: key and certificate operations, in process, beside the raw OpenSSL EVP floor
/// (`PKIFloor`): the same calls with nothing around them. Medians per operation and the ratio to the floor.
struct PKIWorkloads {
    let samples: Int

    struct Row {
        let name: String
        let latchkey: Samples
        let floor: Samples?
    }

    /// Runs `body` `samples` times (after a warm-up), timing each call.
    func measure(_ body: () throws -> Void) rethrows -> Samples {
        for _ in 0..<min(50, samples) { try body() }
        var values: [Double] = []
        values.reserveCapacity(samples)
        for _ in 0..<samples { values.append(try time(body)) }
        return Samples(values)
    }

    func run() throws -> [Row] {
        let message = Data(repeating: 0x42, count: 256)
        let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
        let pkcs1 = KeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA256")
        let ecies = KeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")
        let p256 = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let rsa = try AsymmetricKey.generate(.rsa, bits: 2048)
        let p256Public = p256.publicKey  // Made once, as SecKeyCopyPublicKey would be.
        let p256Floor = PKIFloor(p256)
        let p256PublicFloor = PKIFloor(p256Public)
        let rsaFloor = PKIFloor(rsa)
        let signature = try p256.sign(ecdsa, message)
        let sealed = try p256Public.encrypt(ecies, message)
        var rows: [Row] = []
        rows.append(
            Row(
                name: "P-256 sign", latchkey: try measure { _ = try p256.sign(ecdsa, message) },
                floor: measure { _ = p256Floor.signSHA256(message) }))
        rows.append(
            Row(
                name: "P-256 verify",
                latchkey: try measure { try p256Public.verify(ecdsa, message, signature: signature) },
                floor: measure { _ = p256PublicFloor.verifySHA256(message, signature: signature) }))
        rows.append(
            Row(
                name: "RSA-2048 sign", latchkey: try measure { _ = try rsa.sign(pkcs1, message) },
                floor: measure { _ = rsaFloor.signSHA256(message) }))
        rows.append(
            Row(
                name: "ECIES P-256 encrypt", latchkey: try measure { _ = try p256Public.encrypt(ecies, message) },
                floor: measure { _ = p256Floor.eciesSeal(message, to: p256Public) }))
        rows.append(
            Row(
                name: "ECIES P-256 decrypt", latchkey: try measure { _ = try p256.decrypt(ecies, sealed) },
                floor: measure { _ = p256Floor.eciesOpen(sealed) }))

        // Keychain operations on certificates, on an in-memory keychain: add (decode and derive the
        // attributes) and the identity lookup (the certificate, joined with its private key).
        let keychain = KeychainDatabase.inMemory()
        try keychain.unlock(with: Passphrase("latchkey-in-memory"))
        let caller = CallerIdentity(applicationIdentifier: "bench.app")
        let certificateDER = try Self.selfIssuedCertificate()
        var added = 0
        rows.append(
            Row(
                name: "certificate decode",
                latchkey: try measure { _ = try Certificate(derRepresentation: certificateDER) },
                floor: measure { _ = PKIFloor.decodeCertificate(certificateDER) }))
        let add = try measure {
            added += 1
            try keychain.add(
                NewItem(
                    .certificate,
                    attributes: [.label: .string("c\(added)"), .serialNumber: .data(Data("\(added)".utf8))],
                    data: certificateDER), caller: caller)
        }
        rows.append(Row(name: "certificate add", latchkey: add, floor: nil))
        let hash = try Certificate(derRepresentation: certificateDER).publicKeyHash
        try keychain.add(
            NewItem(.key, attributes: [.keyClass: .number(1), .applicationLabel: .data(hash)], data: Data(count: 97)),
            caller: caller)
        let service = LocalKeychainService(database: keychain, caller: caller)
        rows.append(
            Row(
                name: "identity lookup",
                latchkey: try measure {
                    _ = try service.copyIdentities(
                        certificates: PKIAgentWorkloads.identityCertificates, keys: PKIAgentWorkloads.identityKeys,
                        limit: 1)
                }, floor: nil))
        return rows
    }

    /// The DER of a certificate to add (the test fixtures' leaf, when run from the repository; else the
    /// first certificate of Debian's CA store).
    static func selfIssuedCertificate() throws -> Data {
        let fixture = "Tests/Fixtures/certificates/leaf-ec256.der"
        if FileManager.default.fileExists(atPath: fixture) {
            return try Data(contentsOf: URL(fileURLWithPath: fixture))
        }
        let directory = "/etc/ssl/certs"
        guard
            let name = try FileManager.default.contentsOfDirectory(atPath: directory).sorted().first(where: {
                $0.hasSuffix(".pem")
            }),
            let der = Data(
                base64Encoded: try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
                    .components(separatedBy: "\n").filter { !$0.hasPrefix("-----") }.joined())
        else { throw CocoaError(.fileNoSuchFile) }
        return der
    }

    /// The table: median, p10–p90, and the ratio to the floor's median.
    static func render(_ rows: [Row], command: String) -> String {
        var lines = [
            "## Keys and certificates (in process)", "", "`\(command)`", "",
            "| operation | Latchkey median | p10–p90 | OpenSSL floor median | ratio |", "|---|---|---|---|---|",
        ]
        for row in rows {
            let ours = row.latchkey
            let floor = row.floor.map { formatDuration($0.median) } ?? "–"
            let ratio = row.floor.map { String(format: "%.2f×", ours.median / $0.median) } ?? "–"
            lines.append(
                "| \(row.name) | \(formatDuration(ours.median)) | \(formatDuration(ours.p10))–\(formatDuration(ours.p90)) | \(floor) | \(ratio) |"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
