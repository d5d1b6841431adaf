import FoundationEssentials
import Latchkey

/// find-identity, verify-cert and create-keypair, with `security`'s options and output.
enum IdentityCommands {
    /// `security`'s CSSM name for a trust failure (what `cssmErrorString` prints).
    static func cssmName(_ status: Int32) -> String {
        switch status {
        case -67818: "CSSMERR_TP_CERT_EXPIRED"
        case -67819: "CSSMERR_TP_CERT_NOT_VALID_YET"
        case -67602: "CSSMERR_APPLETP_HOSTNAME_MISMATCH"
        case -67605: "CSSMERR_APPLETP_NO_BASIC_CONSTRAINTS"
        case -67611: "CSSMERR_APPLETP_PATH_LEN_CONSTRAINT"
        case -67609: "CSSMERR_APPLETP_INVALID_EXTENDED_KEY_USAGE"
        case -67820: "CSSMERR_TP_CERT_REVOKED"
        default: "CSSMERR_TP_NOT_TRUSTED"
        }
    }

    /// A `-p` policy name: basic, ssl-server or ssl-client (with `-s` the host name for ssl-server).
    static func policy(_ name: String?, host: String?, client: Bool = false) throws -> (
        policy: TrustPolicy, title: String
    ) {
        switch name ?? (client ? "ssl-client" : "basic") {
        case "basic": return (.basicX509, "X.509 Basic")
        case "ssl-server", "ssl":
            return client
                ? (.ssl(server: false, hostname: nil), "SSL (client)")
                : (.ssl(server: true, hostname: host), "SSL (server)")
        case "ssl-client": return (.ssl(server: false, hostname: nil), "SSL (client)")
        case let other:
            throw UsageError(
                message: "unsupported policy \"\(other)\"; Latchkey evaluates basic, ssl-server and ssl-client")
        }
    }

    // MARK: find-identity

    static let findIdentity = Command(
        "find-identity", synopsis: "[-p policy] [-s string] [-v] [keychain]",
        summary: "Find identities: certificates whose private key is in the keychain.",
        details: """
            Lists the identities — certificates with their private key in the keychain — evaluated under the \
            policy (-p basic, the default, ssl-server or ssl-client; -s gives the host name for ssl-server), \
            each as its number, the certificate's SHA-1 fingerprint and its name, with the reason after the \
            name when the certificate is not trusted: first every matching identity, then only the valid ones, \
            as `security` prints them. -v prints only the valid ones. Trust is evaluated against the system's \
            CA store (Debian's /etc/ssl/certs) and the certificates in the keychain.
            """,
        options: [
            OptionSpec(
                .policy, .required, value: "policy", "The policy: basic (the default), ssl-server or ssl-client."),
            OptionSpec(.host, .required, value: "string", "The host name an ssl-server certificate must be for."),
            OptionSpec(.validOnly, "Show only valid identities."),
        ] + passphraseOptions
    ) { arguments, context in
        let (policy, title) = try policy(arguments.value(.policy), host: arguments.value(.host))
        let store = try CommandKeychain.open(arguments, context: context, group: nil)
        let certificates = try CertificateCommands.stored(store)
        let withKeys = try CertificateCommands.identityKeyHashes(store)
        var identities: [(certificate: Certificate, failure: TrustFailure?)] = []
        for (_, certificate) in certificates where withKeys.contains(certificate.publicKeyHash) {
            var evaluation = TrustEvaluation(
                certificates: [certificate] + certificates.map(\.certificate).filter { $0 != certificate },
                policies: [policy])
            evaluation.anchorsOnly = false
            identities.append((certificate, evaluation.evaluate().failure))
        }
        func line(_ index: Int, _ certificate: Certificate, _ failure: TrustFailure?) -> String {
            let hash = CertificateCommands.hex(certificate.sha1Fingerprint)
            let name = certificate.subjectSummary.flatMap { $0.isEmpty ? nil : $0 } ?? "<unknown>"
            return String(index).leftPadded(to: 3) + ") " + "\(hash) \"\(name)\""
                + (failure.map { " (\(cssmName($0.status)))" } ?? "")
        }
        if !arguments.has(.validOnly) {
            context.stdout.line("")
            context.stdout.line("Policy: \(title)")
            context.stdout.line("  Matching identities")
            for (index, identity) in identities.enumerated() {
                context.stdout.line(line(index + 1, identity.certificate, identity.failure))
            }
            context.stdout.line("     \(identities.count) identities found")
            context.stdout.line("")
            context.stdout.line("  Valid identities only")
        }
        let valid = identities.filter { $0.failure == nil }
        for (index, identity) in valid.enumerated() { context.stdout.line(line(index + 1, identity.certificate, nil)) }
        context.stdout.line("     \(valid.count) valid identities found")
        return 0
    }

    // MARK: verify-cert

    static let verifyCertificate = Command(
        "verify-cert",
        synopsis: "-c certFile [-c certFile...] [-r rootFile...] [-p policy] [-s host] [-C] [-d date] [-q]",
        summary: "Verify a certificate chain.",
        details: """
            Evaluates the first -c certificate (PEM or DER), helped by the other -c certificates, under the \
            policy (-p basic, the default, ssl-server or ssl-client; -s the host name; -C a client), against the \
            -r roots when given, else the system's CA store (Debian's /etc/ssl/certs), at -d date (YYYY-MM-DD or \
            YYYY-MM-DD-HH:MM:SS, UTC) or now. Prints "...certificate verification successful." and exits 0, or \
            prints "Cert Verify Result: " and the reason's CSSM name on standard error and exits 1, as `security` \
            does; -q prints neither. No keychain is opened.
            """,
        options: [
            OptionSpec(
                .certificateFile, .required, value: "certFile",
                "A certificate: the first is the one verified, the others help build the chain."),
            OptionSpec(
                .rootFile, .required, value: "rootFile",
                "A root (or other anchor) to trust instead of the system's store."),
            OptionSpec(
                .policy, .required, value: "policy", "The policy: basic (the default), ssl-server or ssl-client."),
            OptionSpec(.host, .required, value: "host", "The host name an ssl-server certificate must be for."),
            OptionSpec(.clientCertificate, "Verify a client certificate (the ssl-client policy)."),
            OptionSpec(
                .date, .required, value: "date", "Verify at this date (YYYY-MM-DD or YYYY-MM-DD-HH:MM:SS, UTC)."),
            OptionSpec(.quiet, "Print nothing; the exit status says it."),
            OptionSpec(.noNetwork, "Accepted for compatibility: Latchkey never fetches certificates from the network."),
        ],
        positionals: 0...0
    ) { arguments, context in
        let files = arguments.allValues(.certificateFile)
        guard !files.isEmpty else { throw UsageError(message: "name the certificate to verify with -c") }
        var certificates: [Certificate] = []
        for file in files { certificates += try CertificateCommands.certificates(inFile: file) }
        var anchors: [Certificate] = []
        for file in arguments.allValues(.rootFile) { anchors += try CertificateCommands.certificates(inFile: file) }
        let (policy, _) = try policy(
            arguments.value(.policy), host: arguments.value(.host), client: arguments.has(.clientCertificate))
        var evaluation = TrustEvaluation(certificates: certificates, policies: [policy])
        evaluation.anchors = anchors
        if let text = arguments.value(.date) {
            guard let date = parseDate(text) else {
                throw UsageError(message: "-d needs a date as YYYY-MM-DD or YYYY-MM-DD-HH:MM:SS, not '\(text)'")
            }
            evaluation.date = date
        }
        let quiet = arguments.has(.quiet)
        if let failure = evaluation.evaluate().failure {
            if !quiet { context.stderr.line("Cert Verify Result: \(cssmName(failure.status))") }
            return 1
        }
        if !quiet { context.stdout.line("...certificate verification successful.") }
        return 0
    }

    /// `YYYY-MM-DD-HH:MM:SS` or `YYYY-MM-DD` in UTC; nil for anything else or a day the calendar lacks.
    static func parseDate(_ text: String) -> Date? {
        let fields = text.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 3 || fields.count == 4 else { return nil }
        let time =
            fields.count == 4 ? fields[3].split(separator: ":", omittingEmptySubsequences: false) : ["0", "0", "0"]
        let numbers = (fields.prefix(3) + time).map { field -> Int? in
            guard !field.isEmpty, field.count <= 4, field.allSatisfy(\.isASCII), field.allSatisfy(\.isNumber) else {
                return nil
            }
            return Int(field)
        }
        guard time.count == 3, numbers.allSatisfy({ $0 != nil }) else { return nil }
        let values = numbers.map { $0! }
        let components = DateComponents(
            year: values[0], month: values[1], day: values[2], hour: values[3], minute: values[4], second: values[5])
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        guard components.isValidDate(in: calendar), (0..<24).contains(values[3]), (0..<60).contains(values[4]),
            (0..<60).contains(values[5])
        else { return nil }
        return calendar.date(from: components)
    }

    // MARK: create-keypair

    static let createKeypair = Command(
        "create-keypair", synopsis: "[-a alg] [-s size] [options...] name",
        summary: "Create a key pair in the keychain.",
        details: """
            Generates a key pair — RSA (-a rsa, the default; -s 1024 to 8192 bits, default 2048) or elliptic curve \
            (-a ec; -s 256, 384 or 521, default 256) — and stores both halves in the keychain, labelled with the \
            name, with the attributes Apple's keychain gives keys (the application label is the SHA-1 of the \
            public key). A certificate for the public key later makes the pair an identity.
            """,
        options: [
            OptionSpec(.algorithm, .required, value: "alg", "The algorithm: rsa (the default) or ec."),
            OptionSpec(.keySize, .required, value: "size", "The key size in bits."),
            OptionSpec(.accessGroup, .required, value: "group", "Put the keys in this access group."),
            OptionSpec(.tag, .required, value: "tag", "The application tag (kSecAttrApplicationTag) of both keys."),
        ] + passphraseOptions,
        positionals: 1...1
    ) { arguments, context in
        let type: KeyType
        switch arguments.value(.algorithm) ?? "rsa" {
        case "rsa": type = .rsa
        case "ec", "ecdsa": type = .ellipticCurve
        case let other: throw UsageError(message: "unsupported algorithm \"\(other)\"; use rsa or ec")
        }
        let defaultSize = type == .rsa ? 2048 : 256
        guard let bits = Int(arguments.value(.keySize) ?? String(defaultSize)) else {
            throw UsageError(message: "-s needs a number of bits")
        }
        let key: AsymmetricKey
        do {
            key = try AsymmetricKey.generate(type, bits: bits)
        } catch let failure as KeyError {
            throw UsageError(message: failure.reason)
        }
        let store = try CommandKeychain.open(
            arguments, context: context, group: arguments.value(.accessGroup), keychain: .option(nil))
        for half in [key.publicKey, key] {
            var attributes = KeyAttributes.derived(from: half)
            attributes[.label] = .string(arguments.positionals[0])
            if let tag = arguments.value(.tag) { attributes[.applicationTag] = .data(Data(tag.utf8)) }
            if let group = arguments.value(.accessGroup) { attributes[.accessGroup] = .string(group) }
            let external = try half.externalRepresentation()
            _ = try store.run {
                try store.service.add(NewItem(.key, attributes: attributes, data: external.copiedData()), returning: [])
            }
        }
        return 0
    }
}
