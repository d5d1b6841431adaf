import FoundationEssentials

/// What `latchkey desktop enable` changed for this user, kept in `$XDG_STATE_HOME/latchkey/desktop.json` (written
/// again after every change, so an interrupted enable is resumed or undone from where it stopped) and read by
/// `disable` to undo each change, and by `status`.
struct DesktopRecord: Codable {
    /// The record's format.
    var version = 1
    /// The provider the session moved from (`DesktopPeer.id`); nil when none held the name.
    var peer: String?
    /// How many items were copied from it into the keychain.
    var copiedIn = 0
    /// The changes to the user's files, in the order made.
    var changes: [DesktopChange] = []
    /// Set by `disable` once it has undone the changes and before every item is back in the provider.
    var movingBack = false

    static func load(_ paths: DesktopPaths) throws -> DesktopRecord? {
        guard let data = FileManager.default.contents(atPath: paths.record) else { return nil }
        do {
            return try JSONDecoder().decode(DesktopRecord.self, from: data)
        } catch {
            throw CommandFailure(
                message: "the record \(paths.record) cannot be read (\(error)); move it away to start again")
        }
    }

    func save(_ paths: DesktopPaths) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileManager.default.createDirectory(
            atPath: PathText(paths.record).directory, withIntermediateDirectories: true, attributes: nil)
        try encoder.encode(self).write(to: URL(fileURLWithPath: paths.record), options: .atomic)
    }

    static func remove(_ paths: DesktopPaths) throws {
        guard FileManager.default.fileExists(atPath: paths.record) else { return }
        try FileManager.default.removeItem(atPath: paths.record)
    }
}
