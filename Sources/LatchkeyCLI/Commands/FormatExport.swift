import FoundationEssentials
import Latchkey
import LatchkeyFormats
import LatchkeyPOSIX

/// `latchkey export --to kdbx|gnome-keyring -o FILE`: the keychain's passwords in a file another program
/// reads — a KeePass database (KDBX 4) KeePassXC opens, or a keyring file gnome-keyring-daemon unlocks and
/// serves — encrypted under the file's own password. What the format cannot hold is left behind and counted:
/// certificates and keys, and (unless --include-this-device-only) this-device-only items; a KDBX password
/// that is not text goes into the entry's attachment `latchkey-secret.bin`, counted too.
enum FormatExport {
    static let options = [
        OptionSpec(
            .toFormat, .required, value: "format",
            "Write the keychain's passwords to -o's file in another program's format instead: kdbx or gnome-keyring."),
        OptionSpec(
            .kdfMemory, .required, value: "MiB",
            "With --to kdbx, the Argon2d memory in MiB (1 to 1024; the default is 64, as KeePassXC's)."),
        OptionSpec(
            .kdfPasses, .required, value: "count",
            "With --to kdbx, the Argon2d iterations (1 to 1000; the default is 10, as KeePassXC's)."),
    ]

    /// Services of the Secret Service's bookkeeping (its collections and their labels): not passwords.
    static let bookkeepingServices: Set<String> = [
        "org.freedesktop.secrets.collections", "org.freedesktop.secrets.labels",
    ]

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws -> Int32 {
        let format = arguments.value(.toFormat) ?? ""
        guard format == "kdbx" || format == "gnome-keyring" else {
            throw UsageError(message: "--to takes kdbx or gnome-keyring, not '\(format)'")
        }
        guard arguments.positionals.isEmpty else {
            throw UsageError(message: "--to writes the keychain named with -k; it takes no other argument")
        }
        guard let output = arguments.value(.output) else { throw UsageError(message: "-o file is required") }
        guard FileStatus.of(path: output) == nil else {
            throw CommandFailure(message: "\(output) already exists; choose a new file name")
        }
        let memory = try number(arguments, .kdfMemory, default: 64, in: 1...1024)
        let passes = try number(arguments, .kdfPasses, default: 10, in: 1...1000)
        if format != "kdbx" && (arguments.has(.kdfMemory) || arguments.has(.kdfPasses)) {
            throw UsageError(message: "--kdf-memory and --kdf-passes go with --to kdbx")
        }
        let keychainArgument = arguments.value(.keychainShort)
        let (keychain, confirmation) = try context.openUnlockedConfirming(
            context.keychainPath(keychainArgument), displayName: context.keychainName(keychainArgument),
            arguments: arguments)
        let caller = commandLineCaller(group: nil, environment: context.environment)
        var items: [ItemResult] = []
        var left: [String: Int] = [:]
        for itemClass in ItemClass.stored {
            let found: [ItemResult]
            do throws(KeychainError) {
                found = try keychain.copyMatching(
                    ItemQuery(itemClass, synchronizable: .any, limit: .all, returning: [.attributes, .data]),
                    caller: caller, presence: confirmation)
            } catch {
                guard error.status == .itemNotFound else { throw error }
                continue
            }
            for item in found {
                if itemClass == .certificate || itemClass == .key {
                    left[itemClass == .key ? "key" : "certificate", default: 0] += 1
                    continue
                }
                if let service = item[.service]?.stringValue, bookkeepingServices.contains(service) { continue }
                let accessibility = item[.accessible]?.stringValue.flatMap(Accessibility.init(rawValue:))
                if accessibility?.isThisDeviceOnly == true && !arguments.has(.includeThisDeviceOnly) {
                    left["this-device-only item", default: 0] += 1
                    continue
                }
                items.append(item)
            }
        }
        let password = try FormatImport.filePassphrase(
            arguments, context: context, prompt: "password for \(output): ", confirm: true)
        var written: [UInt8]
        var binary = 0
        if format == "kdbx" {
            let entries = items.map { EntryMapping.entry(for: $0.itemClass, $0.attributes, data: $0.data ?? Data()) }
            (written, binary) = try KDBXWriter.write(
                name: "Latchkey", entries: entries, password: password, keyFile: nil,
                keyDerivation: KDBXWriter.defaultKeyDerivation(
                    memoryKiB: UInt32(memory) << 10, iterations: UInt32(passes)))
        } else {
            let base = output.split(separator: "/").last.map(String.init) ?? output
            let stem = base.hasSuffix(".keyring") ? String(base.dropLast(8)) : base
            let keyring = KeyringFile(
                name: stem == "login" ? "Login" : stem, created: Date(), modified: Date(),
                items: items.map { KeyringItemMapping.item($0.itemClass, $0.attributes, data: $0.data ?? Data()) })
            written = try keyring.written(password: password)
        }
        defer { written.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        try BackupCommands.writeNew(output, contents: Data(written))
        let internet = items.count { $0.itemClass == .internetPassword }
        let generic = items.count - internet
        var kinds: [String] = []
        if internet > 0 { kinds.append("\(internet) internet password\(internet == 1 ? "" : "s")") }
        if generic > 0 { kinds.append("\(generic) generic password\(generic == 1 ? "" : "s")") }
        context.stdout.line(
            "exported \(items.count) item\(items.count == 1 ? "" : "s") to \(output)"
                + (kinds.isEmpty ? "" : ": " + kinds.joined(separator: ", ")))
        if !left.isEmpty {
            let what = left.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)\($0.value == 1 ? "" : "s")" }
            let why =
                left.keys.contains("this-device-only item")
                ? "--include-this-device-only takes this-device-only items; " : ""
            context.stdout.line(
                "left behind: \(what.joined(separator: ", ")) (\(why)\(format == "kdbx" ? "a KeePass" : "a keyring") file holds passwords only)"
            )
        }
        if binary > 0 {
            context.stdout.line(
                "\(binary) secret\(binary == 1 ? "" : "s") that \(binary == 1 ? "is" : "are") not text written as the attachment \(EntryMapping.binarySecretAttachment) (KDBX's password field holds text only)"
            )
        }
        return 0
    }

    static func number(_ arguments: ParsedArguments, _ key: OptionKey, default value: Int, in range: ClosedRange<Int>)
        throws -> Int
    {
        guard let text = arguments.value(key) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                message: "\(key.spelling) takes a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'"
            )
        }
        return number
    }
}
