import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX

/// add-certificates, find-certificate and delete-certificate, with `security`'s options and output.
enum CertificateCommands {
    /// The certificates in a file: every PEM "CERTIFICATE" block, or the whole file as DER when it has none.
    static func certificates(inFile path: String) throws -> [Certificate] {
        try certificates(in: try readFile(path), path: path)
    }

    /// A file's bytes, or a failure naming it: no such file, not a regular file, larger than `maximumImportBytes`.
    static func readFile(_ path: String) throws -> Data {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure(message: "cannot read \(path): no such file")
        }
        // Symbolic links followed (as in /etc/ssl/certs); the size is checked before anything is read.
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        do {
            return Data(try Files.read(resolved, limit: maximumImportBytes))
        } catch {
            switch error {
            case .tooLarge(let size):
                throw KeychainError.param(
                    "\(path) has \(size) bytes; a file to import has at most \(maximumImportBytes >> 20) MiB")
            case .notRegularFile: throw KeychainError.param("\(path) is not a regular file")
            case .system(let failure): throw CommandFailure(message: "cannot read \(path): \(failure)")
            }
        }
    }

    /// The largest certificate, key or PKCS #12 file `import` reads (a CA bundle is a few hundred KB).
    static let maximumImportBytes = 16 << 20

    /// The certificates in a file's bytes (`path` names it in errors).
    static func certificates(in bytes: Data, path: String) throws -> [Certificate] {
        let text = String(decoding: bytes, as: UTF8.self)
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var blocks: [Data] = []
        var rest = text[...]
        while let start = rest.firstRange(of: begin) {
            guard let stop = rest[start.upperBound...].firstRange(of: end),
                let der = Data(
                    base64Encoded: String(rest[start.upperBound..<stop.lowerBound]), options: .ignoreUnknownCharacters)
            else {
                throw KeychainError(.decode, "\(path): a PEM certificate block is cut short or not base64")
            }
            blocks.append(der)
            rest = rest[stop.upperBound...]
        }
        if blocks.isEmpty { blocks = [bytes] }
        var certificates: [Certificate] = []
        for (index, der) in blocks.enumerated() {
            do {
                certificates.append(try Certificate(derRepresentation: der))
            } catch {
                let which = blocks.count > 1 ? "certificate \(index + 1) of \(path)" : path
                throw KeychainError(.decode, "\(which): \(error.reason)")
            }
        }
        return certificates
    }

    /// Every certificate the caller can see, decoded (items whose data is not a certificate are skipped).
    static func stored(_ store: CommandKeychain) throws -> [(item: ItemResult, certificate: Certificate)] {
        let query = ItemQuery(
            .certificate, synchronizable: .any, limit: .all, returning: [.attributes, .data, .persistentReference])
        let items: [ItemResult]
        do {
            items = try store.run { try store.service.copyMatching(query) }
        } catch let error as KeychainError where error.status == .itemNotFound {
            return []
        }
        return items.compactMap { item in
            guard let data = item.data, let certificate = try? Certificate(derRepresentation: data) else {
                return nil  // A certificate item whose bytes are no certificate has no name or hash to match.
            }
            return (item, certificate)
        }
    }

    /// `kSecClassIdentity` through the SecItem layer's join (`ServiceBackend`), every access group and
    /// synchronizable or not; nothing when there is no identity.
    static func identityQuery(_ store: CommandKeychain, returning: String) throws -> [Any] {
        let query: [String: Any] = ["class": "idnt", "sync": "syna", "m_Limit": "m_LimitAll", returning: true]
        do {
            return try store.run { try ServiceBackend(service: store.service).copyMatching(query) } as? [Any] ?? []
        } catch let error as KeychainError where error.status == .itemNotFound {
            return []
        }
    }

    /// The public key hashes of the certificates that have their private key in the keychain (no key is read).
    static func identityKeyHashes(_ store: CommandKeychain) throws -> Set<Data> {
        Set(
            try identityQuery(store, returning: "r_Attributes").compactMap {
                ($0 as? [String: Any])?[AttributeKey.publicKeyHash.rawValue] as? Data
            })
    }

    /// The keychain's identities, each a certificate with its private key.
    static func identities(_ store: CommandKeychain) throws -> [Identity] {
        try identityQuery(store, returning: "r_Ref").compactMap { $0 as? Identity }
    }

    static func hex(_ data: Data) -> String { Hex.encode(data, uppercase: true) }

    static func pem(_ certificate: Certificate) -> String {
        let base64 = certificate.derRepresentation.base64EncodedString()
        var lines = ["-----BEGIN CERTIFICATE-----"]
        var index = base64.startIndex
        while index < base64.endIndex {
            let next = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<next]))
            index = next
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: add-certificates

    static let add = Command(
        "add-certificates", synopsis: "[-k keychain] file...",
        summary: "Add certificates to a keychain.",
        details: """
            Adds the certificates in each file: PEM (every CERTIFICATE block) or DER. Each is stored with the \
            attributes Apple's keychain derives (type, encoding, subject, issuer, serial number, subject key \
            identifier, public key hash) and labelled with its subject summary. A certificate already in the \
            keychain is reported and the others are still added; the exit status is then that of the first \
            failure (45 for a duplicate, 26 for a file that is not a certificate). Certificates are readable at \
            any time, so no passphrase is needed unless the keychain has never been unlocked.
            """,
        options: [
            OptionSpec(
                .keychainShort, .required, value: "keychain",
                "The keychain to add to (the default keychain when omitted)."),
            OptionSpec(.accessGroup, .required, value: "group", "Put the certificates in this access group."),
        ] + passphraseOptions,
        positionals: 1...Int.max
    ) { arguments, context in
        var loaded: [(file: String, certificate: Certificate)] = []
        for file in arguments.positionals {
            loaded += try certificates(inFile: file).map { (file, $0) }
        }
        let store = try CommandKeychain.open(
            arguments, context: context, group: arguments.value(.accessGroup),
            keychain: .option(arguments.value(.keychainShort)))
        var firstFailure: KeychainError?
        for (file, certificate) in loaded {
            var attributes: [AttributeKey: AttributeValue] = [:]
            if let group = arguments.value(.accessGroup) { attributes[.accessGroup] = .string(group) }
            let item = NewItem(.certificate, attributes: attributes, data: certificate.derRepresentation)
            do {
                _ = try store.run { try store.service.add(item, returning: []) }
            } catch let error as KeychainError {
                context.error("\(file): \(certificate.subjectSummary ?? "certificate"): \(error.message)")
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure { return LatchkeyCommandLine.exitStatus(for: firstFailure.status) }
        return 0
    }

    // MARK: find-certificate

    static let find = Command(
        "find-certificate", synopsis: "[-a] [-c name] [-e address] [-m] [-p] [-Z] [keychain]",
        summary: "Find certificates.",
        details: """
            Finds the first certificate (every one with -a) whose last common name contains the -c text, ignoring \
            case, or that has the -e e-mail address (then -c is not used), as `security` does, and prints its \
            attributes; -p prints it as PEM instead, -Z first prints its SHA-256 and SHA-1 fingerprints, -m its \
            e-mail addresses. When nothing matches, it says so and exits with 44; with -a it prints nothing and \
            exits with 0.
            """,
        options: [
            OptionSpec(.allMatches, "Find every matching certificate, not only the first."),
            OptionSpec(
                .commonName, .required, value: "name", "Match certificates whose common name contains this text."),
            OptionSpec(.email, .required, value: "address", "Match certificates with this e-mail address."),
            OptionSpec(.printEmail, "Print the e-mail addresses of each certificate."),
            OptionSpec(.pem, "Print each certificate as PEM instead of its attributes."),
            OptionSpec(.printHashes, "Print the SHA-256 and SHA-1 fingerprints of each certificate."),
        ] + passphraseOptions
    ) { arguments, context in
        let path = context.keychainPath(arguments.positionals.first)
        let store = try CommandKeychain.open(arguments, context: context, group: nil)
        var found = try stored(store).filter { _, certificate in
            if let address = arguments.value(.email) {
                return certificate.emailAddresses.contains { TextFolding.equal($0, address, options: .caseInsensitive) }
            }
            if let name = arguments.value(.commonName) {
                return certificate.commonNames.last.map { TextFolding.contains($0, name, options: .caseInsensitive) }
                    ?? false
            }
            return true
        }
        if !arguments.has(.allMatches) {
            guard let first = found.first else { throw KeychainError(.itemNotFound) }
            found = [first]
        }
        for (item, certificate) in found {
            if arguments.has(.printHashes) {
                context.stdout.line("SHA-256 hash: " + hex(certificate.sha256Fingerprint))
                context.stdout.line("SHA-1 hash: " + hex(certificate.sha1Fingerprint))
            }
            if arguments.has(.printEmail) {
                context.stdout.line("email addresses: " + certificate.emailAddresses.joined(separator: ", "))
            }
            context.stdout.write(arguments.has(.pem) ? pem(certificate) : ItemPrinter.block(item, keychainPath: path))
        }
        return 0
    }

    // MARK: delete-certificate

    static let delete = Command(
        "delete-certificate", synopsis: "(-c name | -Z hash) [-t] [keychain]",
        summary: "Delete a certificate.",
        details: """
            Deletes the certificate whose common name is exactly the -c name, or whose SHA-1 fingerprint is the -Z \
            hash (40 hexadecimal digits, as find-certificate -Z prints it). When the name matches several \
            certificates nothing is deleted and the fingerprints are listed, so the one meant can be named by \
            -Z. When nothing matches, it exits with 44. -t is accepted for compatibility: Latchkey keeps no \
            trust settings.
            """,
        options: [
            OptionSpec(.commonName, .required, value: "name", "The common name of the certificate to delete."),
            OptionSpec(.sha1Hash, .required, value: "hash", "The SHA-1 fingerprint of the certificate to delete."),
            OptionSpec(.trustSettings, "Accepted for compatibility and ignored: Latchkey keeps no trust settings."),
        ] + passphraseOptions
    ) { arguments, context in
        let name = arguments.value(.commonName)
        let hash = arguments.value(.sha1Hash)?.uppercased()
        guard (name == nil) != (hash == nil) else {
            throw UsageError(message: "name the certificate with -c or with -Z, not both")
        }
        if let hash, hash.count != 40 || !hash.allSatisfy(\.isHexDigit) {
            throw UsageError(message: "-Z needs a SHA-1 fingerprint of 40 hexadecimal digits")
        }
        let store = try CommandKeychain.open(arguments, context: context, group: nil)
        let matches = try stored(store).filter { _, certificate in
            if let hash { return hex(certificate.sha1Fingerprint) == hash }
            return certificate.commonNames.last == name
        }
        guard let (item, _) = matches.first else { throw KeychainError(.itemNotFound) }
        if matches.count > 1 {
            let list = matches.map { hex($0.certificate.sha1Fingerprint) }.joined(separator: ", ")
            throw CommandFailure(
                message:
                    "\(matches.count) certificates are named \"\(name ?? "")\"; name one by its SHA-1 hash with -Z: \(list)"
            )
        }
        let target = ItemQuery(
            .certificate, synchronizable: .any, persistentReference: item.persistentReference, limit: .all)
        _ = try store.run { try store.service.delete(target) }
        return 0
    }
}
