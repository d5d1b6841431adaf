import FoundationEssentials
package import LatchkeyEngine
import LatchkeyPOSIX

/// A `pass` store (`~/.password-store`): one gpg-encrypted file per entry, the first line the password and
/// the rest notes, directories as groups. Each file is decrypted by running the user's own `gpg` as `pass`
/// runs it (`--decrypt --batch --use-agent`, with PASSWORD_STORE_GPG_OPTS), so gpg-agent and its pinentry
/// ask for the key's passphrase as they do for `pass show`; no GPG library is linked.
package enum PasswordStore {
    /// The store's entries: every `*.gpg` file below `directory` (hidden directories such as `.git` and
    /// `.extensions` left out), as paths relative to it, sorted.
    package static func files(in directory: String) throws(KeychainError) -> [String] {
        guard FileStatus.of(path: directory, followingLinks: true)?.kind == .directory else {
            throw KeychainError(.noSuchKeychain, "\(directory) is not a password store (no such directory)")
        }
        var found: [String] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let path = relative.isEmpty ? directory : directory + "/" + relative
            guard let names = Files.entries(of: path) else {
                throw KeychainError(.io, "cannot read the directory \(path)")
            }
            for name in names where !name.hasPrefix(".") {
                let child = relative.isEmpty ? name : relative + "/" + name
                switch FileStatus.of(path: directory + "/" + child, followingLinks: true)?.kind {
                case .directory: pending.append(child)
                case .regular where name.hasSuffix(".gpg"): found.append(child)
                default: break
                }
            }
            guard found.count <= 1_000_000 else {
                throw KeychainError.param("\(directory) holds over a million entries")
            }
        }
        return found.sorted()
    }

    /// The entry of the file at `relative` ("mail/work.gpg"), from its decrypted text.
    package static func entry(relative: String, content: [UInt8]) -> PasswordEntry {
        var parts = relative.split(separator: "/").map(String.init)
        let title = String((parts.popLast() ?? "").dropLast(4))
        let text = String(decoding: content, as: UTF8.self)
        var password = Substring(text)
        var notes = Substring("")
        if let newline = text.firstIndex(of: "\n") {
            password = text[..<newline]
            notes = text[text.index(after: newline)...]
            if notes.hasSuffix("\n") { notes = notes.dropLast() }
        }
        return PasswordEntry(title: title, groups: parts, password: Data(password.utf8), notes: String(notes))
    }

    /// The `gpg` `pass` would run: `gpg2` when the PATH has it, else `gpg`; nil when there is neither.
    package static func gpg(path: String) -> String? {
        for name in ["gpg2", "gpg"] {
            for directory in path.split(separator: ":") where !directory.isEmpty {
                let candidate = "\(directory)/\(name)"
                if FileStatus.of(path: candidate, followingLinks: true)?.kind == .regular { return candidate }
            }
        }
        return nil
    }

    /// The decrypted contents of `file`: `errSecAuthFailed` with gpg's own message when it cannot decrypt it
    /// (no secret key, a wrong or refused passphrase), after the whole of gpg's output was read.
    package static func decrypt(_ file: String, gpg: String, options: [String], environment: [String: String])
        throws(KeychainError) -> [UInt8]
    {
        let output: (read: FileDescriptor, write: FileDescriptor)
        let errors: (read: FileDescriptor, write: FileDescriptor)
        do throws(Errno) {
            output = try Pipes.make()
            errors = try Pipes.make()
        } catch {
            throw KeychainError(.io, "cannot make a pipe for gpg: \(error)")
        }
        defer {
            output.read.close()
            errors.read.close()
        }
        var spawnOptions = Spawn.Options()
        spawnOptions.standardOutput = .descriptor(output.write)
        spawnOptions.standardError = .descriptor(errors.write)
        let pid: Int32
        do throws(Errno) {
            pid = try Spawn.start(
                gpg,
                options + [
                    "--quiet", "--yes", "--compress-algo=none", "--no-encrypt-to", "--batch", "--use-agent",
                    "--decrypt",
                    "--", file,
                ], environment: environment, options: spawnOptions)
        } catch {
            output.write.close()
            errors.write.close()
            throw KeychainError(.io, "cannot run \(gpg): \(error)")
        }
        output.write.close()
        errors.write.close()
        let content: [UInt8]
        let message: [UInt8]
        do throws(FileDescriptor.ReadAllFailure) {
            content = try output.read.readAll(limit: ItemLimits.maximumDataBytes)
            message = try errors.read.readAll(limit: 64 << 10)
        } catch {
            Spawn.terminate(pid)
            _ = Spawn.wait(pid)
            throw KeychainError.param(
                "gpg's output for \(file) is larger than an item's \(ItemLimits.maximumDataBytes >> 20) MiB")
        }
        let status = Spawn.wait(pid)
        guard status == .exited(0) else {
            var copy = content
            copy.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
            let said =
                String(decoding: message, as: UTF8.self).split(separator: "\n").last.map(String.init)
                ?? "\(String(describing: status))"
            throw KeychainError(.authFailed, "gpg could not decrypt \(file): \(said)")
        }
        return content
    }
}
