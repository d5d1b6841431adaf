import FoundationEssentials
import Latchkey

/// `import FILE` and `export -t …` in `security`'s sense: certificates, keys and identities in PEM, DER and
/// PKCS #12 (the encrypted backups are `import -i` and `export -o` without `-t`).
enum PKITransfer {
    static let importOptions = [
        OptionSpec(
            .keychainShort, .required, value: "keychain",
            "The keychain to import into (when importing a certificate or PKCS #12 file)."),
        OptionSpec(
            .pkiType, .required, value: "type", "What the file holds: cert or agg (an identity with its chain)."),
        OptionSpec(
            .pkiFormat, .required, value: "format",
            "The file's format: pkcs12, x509, pemseq (found from the contents when omitted)."),
        OptionSpec(
            .keyPassphrase, .required, value: "passphrase",
            "The passphrase of a PKCS #12 file or an encrypted private key (a passphrase on the command line is visible to other users)."
        ),
        keyPassphraseOption,
    ]

    /// The safe way to give -P's passphrase.
    static let keyPassphraseOption = OptionSpec(
        .keyPassphraseFD, .required, value: "fd",
        "Read the PKCS #12 file's or the keys' passphrase from this open file descriptor (one line), instead of -P.")

    /// The passphrase of a PKCS #12 file or of keys: from `--key-passphrase-fd`, else `insecureKey`'s value
    /// (`-P`, warned about; nil for a command that takes the passphrase only from the descriptor, as
    /// `tpm sign-policy`), else none.
    static func keyPassphrase(
        _ arguments: ParsedArguments, context: CLIContext, insecureKey: OptionKey? = .keyPassphrase
    ) throws -> String? {
        if let fd = arguments.value(.keyPassphraseFD) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--key-passphrase-fd needs a file descriptor number, not '\(fd)'")
            }
            context.protectMemory()
            // OpenSSL takes the passphrase as a C string: it is copied out of its locked buffer for the call.
            return try PassphraseSource.fileDescriptor(descriptor).read().withUnsafeBytes {
                String(decoding: $0, as: UTF8.self)
            }
        }
        guard let insecureKey, let value = arguments.value(insecureKey) else { return nil }
        context.warnVisiblePassphrase(insecureKey.spelling, safe: "--key-passphrase-fd")
        return value
    }

    static let exportOptions = [
        OptionSpec(.keychainShort, .required, value: "keychain", "The keychain to export from (with -t)."),
        OptionSpec(
            .pkiType, .required, value: "type",
            "What to export: certs, identities, pubKeys or allKeys (instead of an encrypted backup)."),
        OptionSpec(
            .pkiFormat, .required, value: "format",
            "pemseq or x509 for certs (default pemseq); pkcs12 for identities; openssl (PEM) for keys."),
        OptionSpec(
            .keyPassphrase, .required, value: "passphrase",
            "The passphrase of the PKCS #12 file or of the exported private keys (visible to other users; see --key-passphrase-fd)."
        ),
        keyPassphraseOption,
    ]

    /// Whether the import is `security`'s (a file to read certificates or identities from).
    static func isPKIImport(_ arguments: ParsedArguments) -> Bool { !arguments.has(.input) }

    /// Whether the export is `security`'s (`-t`).
    static func isPKIExport(_ arguments: ParsedArguments) -> Bool {
        arguments.has(.pkiType) || arguments.has(.pkiFormat)
    }

    /// Adds an item, counting a duplicate instead of failing.
    private static func add(_ item: NewItem, store: CommandKeychain) throws -> Bool {
        do {
            _ = try store.run { try store.service.add(item, returning: []) }
            return true
        } catch let error as KeychainError where error.status == .duplicateItem {
            return false
        }
    }

    static func runImport(_ arguments: ParsedArguments, context: CLIContext) throws -> Int32 {
        guard let file = arguments.positionals.first else {
            throw UsageError(message: "name the file to import (or -i for a backup)")
        }
        guard arguments.positionals.count == 1 else {
            throw UsageError(message: "import takes one file; name the keychain with -k")
        }
        let format = arguments.value(.pkiFormat)
        guard [nil, "pkcs12", "x509", "pemseq"].contains(format) else {
            throw UsageError(message: "unsupported format \"\(format!)\"; use pkcs12, x509 or pemseq")
        }
        guard [nil, "cert", "agg"].contains(arguments.value(.pkiType)) else {
            throw UsageError(
                message:
                    "unsupported type \"\(arguments.value(.pkiType)!)\"; use cert or agg (bare keys cannot be imported yet)"
            )
        }
        let bytes = try CertificateCommands.readFile(file)
        let passphrase = try keyPassphrase(arguments, context: context) ?? ""
        var identity: Identity?
        var certificates: [Certificate] = []
        var keys: [AsymmetricKey] = []
        // PKCS #12 when told, or when the bytes are neither PEM nor one DER certificate (`try?`: not being a
        // certificate is the answer sought, not a failure).
        let looksLikePKCS12 =
            format == "pkcs12"
            || (format == nil && (try? Certificate(derRepresentation: bytes)) == nil
                && !String(decoding: bytes, as: UTF8.self).contains("-----BEGIN "))
        if looksLikePKCS12 {
            let contents: PKCS12Contents
            do {
                contents = try PKCS12Contents(bytes, passphrase: passphrase)
            } catch {
                throw KeychainError(KeychainStatus(rawValue: error.kind.rawValue), "\(file): \(error.reason)")
            }
            identity = contents.identity
            certificates = identity == nil ? contents.certificates : Array(contents.certificates.dropFirst())
        } else if String(decoding: bytes, as: UTF8.self).contains("KEY-----") {
            let text = String(decoding: bytes, as: UTF8.self)
            do {
                keys = try AsymmetricKey.keys(inPEM: text, passphrase: passphrase)
            } catch {
                throw KeychainError(KeychainStatus(rawValue: error.kind.rawValue), "\(file): \(error.reason)")
            }
            if text.contains("-----BEGIN CERTIFICATE-----") {
                certificates = try CertificateCommands.certificates(in: bytes, path: file)
            }
        } else {
            certificates = try CertificateCommands.certificates(in: bytes, path: file)
        }
        let store = try CommandKeychain.open(
            arguments, context: context, group: nil, keychain: .option(arguments.value(.keychainShort)))
        var identities = 0
        var added = 0
        var present = 0
        var keysAdded = 0
        for key in keys {
            let external = try key.externalRepresentation()
            if try add(
                NewItem(.key, attributes: KeyAttributes.derived(from: key), data: external.copiedData()), store: store)
            {
                keysAdded += 1
            } else {
                present += 1
            }
        }
        if let identity {
            let external = try identity.privateKey.externalRepresentation()
            let certificateAdded = try add(
                NewItem(.certificate, data: identity.certificate.derRepresentation), store: store)
            var attributes = KeyAttributes.derived(from: identity.privateKey)
            if let summary = identity.certificate.subjectSummary { attributes[.label] = .string(summary) }
            let keyAdded = try add(NewItem(.key, attributes: attributes, data: external.copiedData()), store: store)
            if certificateAdded || keyAdded { identities += 1 } else { present += 1 }
        }
        for certificate in certificates {
            if try add(NewItem(.certificate, data: certificate.derRepresentation), store: store) {
                added += 1
            } else {
                present += 1
            }
        }
        if identities > 0 { context.stdout.line("\(identities) identit\(identities == 1 ? "y" : "ies") imported.") }
        if added > 0 { context.stdout.line("\(added) certificate\(added == 1 ? "" : "s") imported.") }
        if keysAdded > 0 { context.stdout.line("\(keysAdded) key\(keysAdded == 1 ? "" : "s") imported.") }
        if present > 0 {
            context.stdout.line("\(present) item\(present == 1 ? " was" : "s were") already in the keychain.")
        }
        return 0
    }

    /// Every asymmetric key of the keychain as PEM: the public keys (each once), then, with
    /// `includePrivate`, the private keys as encrypted PKCS #8 — but for those the keychain holds, which
    /// never leave it (counted in `heldLeftOut`; their public keys are exported).
    static func exportKeys(store: CommandKeychain, includePrivate: Bool, passphrase: String) throws -> (
        pem: Data, heldLeftOut: Int
    ) {
        let items = try store.run {
            try store.service.copyMatching(
                ItemQuery(.key, synchronizable: .any, limit: .all, returning: [.attributes, .data]))
        }
        var publicKeys: [AsymmetricKey] = []
        var privateKeys: [AsymmetricKey] = []
        var heldLeftOut = 0
        for var item in items {
            if item.attributes[.tokenID] != nil {
                // A held key's data is its public key.
                item = ItemResult(
                    itemClass: .key, attributes: item.attributes.merging([.keyClass: .number(0)]) { _, new in new },
                    data: item.data, persistentReference: item.persistentReference)
                if includePrivate { heldLeftOut += 1 }
            }
            // Symmetric keys and items whose bytes are not their key have no PEM form: left out.
            guard let data = item.data, let key = try? KeyAttributes.key(data: data, attributes: item.attributes) else {
                continue
            }
            if !publicKeys.contains(where: { $0.publicKeyData == key.publicKeyData }) {
                publicKeys.append(key.publicKey)
            }
            if key.isPrivate { privateKeys.append(key) }
        }
        guard !publicKeys.isEmpty else { throw KeychainError(.itemNotFound) }
        var output = Data()
        do {
            for key in publicKeys { output += Data(try key.publicKeyPEM().utf8) }
            if includePrivate {
                for key in privateKeys { output += try key.encryptedPrivateKeyPEM(passphrase: passphrase).copiedData() }
            }
        } catch {
            throw KeychainError(error)
        }
        return (output, heldLeftOut)
    }

    static func runExport(_ arguments: ParsedArguments, context: CLIContext) throws -> Int32 {
        let type = arguments.value(.pkiType) ?? "certs"
        let store = try CommandKeychain.open(
            arguments, context: context, group: nil, keychain: .option(arguments.value(.keychainShort)))
        let output: Data
        switch type {
        case "certs":
            let format = arguments.value(.pkiFormat) ?? "pemseq"
            let certificates = try CertificateCommands.stored(store).map(\.certificate)
            guard !certificates.isEmpty else { throw KeychainError(.itemNotFound) }
            switch format {
            case "pemseq": output = Data(certificates.map(CertificateCommands.pem).joined().utf8)
            case "x509":
                guard certificates.count == 1 else {
                    throw CommandFailure(
                        message: "x509 holds one certificate and the keychain has \(certificates.count); use -f pemseq")
                }
                output = certificates[0].derRepresentation
            default: throw UsageError(message: "certs are exported as pemseq or x509, not \"\(format)\"")
            }
        case "identities":
            guard (arguments.value(.pkiFormat) ?? "pkcs12") == "pkcs12" else {
                throw UsageError(message: "identities are exported as pkcs12")
            }
            // A PKCS #12 file under an empty passphrase is a private key in the clear to anyone who reads it.
            guard let passphrase = try keyPassphrase(arguments, context: context), !passphrase.isEmpty else {
                throw UsageError(
                    message:
                        "-t identities writes a private key, encrypted: give its passphrase with --key-passphrase-fd or -P"
                )
            }
            let stored = try CertificateCommands.stored(store)
            let found = try CertificateCommands.identities(store)
            guard let identity = found.first else { throw KeychainError(.itemNotFound) }
            guard found.count == 1 else {
                throw CommandFailure(
                    message:
                        "the keychain has \(found.count) identities; PKCS #12 export takes one (delete or move the others)"
                )
            }
            let chain = stored.map(\.certificate).filter { $0 != identity.certificate }
            do {
                output = try identity.pkcs12(
                    chain: chain, passphrase: passphrase, label: identity.certificate.subjectSummary)
            } catch {
                throw KeychainError(error)
            }
        case "pubKeys", "allKeys":
            guard [nil, "openssl", "pemseq"].contains(arguments.value(.pkiFormat)) else {
                throw UsageError(
                    message: "keys are exported as PEM (-f openssl), not \"\(arguments.value(.pkiFormat)!)\"")
            }
            let passphrase = type == "allKeys" ? try keyPassphrase(arguments, context: context) ?? "" : ""
            if type == "allKeys" && passphrase.isEmpty {
                throw UsageError(
                    message:
                        "-t allKeys writes private keys, encrypted: give their passphrase with --key-passphrase-fd or -P"
                )
            }
            let (pem, heldLeftOut) = try exportKeys(
                store: store, includePrivate: type == "allKeys", passphrase: passphrase)
            output = pem
            if heldLeftOut > 0 {
                context.stderr.line(
                    "latchkey: export: left \(heldLeftOut) private key\(heldLeftOut == 1 ? "" : "s") the keychain holds out (they never leave it); their public keys are exported"
                )
            }
        default:
            throw UsageError(message: "unsupported type \"\(type)\"; use certs, identities, pubKeys or allKeys")
        }
        if let path = arguments.value(.output) {
            try BackupCommands.writeNew(path, contents: output)
        } else {
            context.stdout.write(output)
        }
        return 0
    }
}
