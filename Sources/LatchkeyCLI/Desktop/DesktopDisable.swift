import FoundationEssentials
import Latchkey
import LatchkeyDBus

/// `desktop disable`: the keychain's Secret Service items read, each recorded change undone, the name handed
/// back to the provider, and the items copied into it (what it has already is skipped).
struct DesktopDisable {
    let arguments: ParsedArguments
    let context: CLIContext
    let paths: DesktopPaths
    let session: DesktopSession
    let dryRun: Bool

    var out: any OutputSink { context.stdout }

    func run() throws -> Int32 {
        guard var record = try DesktopRecord.load(paths) else {
            out.line("latchkey desktop is not enabled for this user (no record at \(paths.record)); nothing to undo")
            return 0
        }
        if dryRun { out.line("dry run: nothing is changed") }
        let peer = record.peer.flatMap(DesktopPeer.named)
        // 1. What goes back, read while the agent still serves the keychain unlocked.
        let items = peer == nil ? [] : try SecretServiceExport.items(in: DesktopCommand.keychain(arguments, context))
        // 2. Each change undone, the last first.
        while let change = record.changes.last {
            if dryRun {
                out.line(change.undoDescription)
                record.changes.removeLast()
                continue
            }
            if try change.undo() {
                out.line(change.undoDescription)
            } else {
                out.line("left \(change.path) as it is: it changed since `desktop enable` made it")
            }
            record.changes.removeLast()
            record.movingBack = peer != nil
            try record.save(paths)
        }
        // 3. The name handed back, the bus reading the activation files again first.
        if !dryRun {
            do throws(BusError) {
                try session.reloadBus()
            } catch {
                out.line(
                    "the session bus did not read its activation files again (\(error)); it will at the next login")
            }
        }
        try handBack(to: peer)
        // 4. The items moved back.
        if let peer {
            if dryRun {
                out.line("copy \(DesktopCommand.items(items.count)) into \(peer.name) (what it has already is skipped)")
                return 0
            }
            let owner: DesktopSession.Owner?
            do {
                owner = try session.owner()
            } catch {
                throw CommandFailure(message: "the session bus cannot be reached: \(error)")
            }
            guard let owner, owner.peer == peer else {
                out.line(
                    "\(peer.name) does not hold org.freedesktop.secrets yet, so \(DesktopCommand.items(items.count)) "
                        + "wait in the keychain: log in again (or start it), then run `latchkey desktop disable` again")
                return 1
            }
            let report: (copied: Int, present: Int, locked: Int)
            do throws(BusError) {
                report = try SecretServiceExport.write(items, to: DesktopSession.busName)
            } catch {
                // GNOME Keyring started by its unit, not by a login, has its login keyring locked: its PAM module
                // unlocks it at the next login, when this is run again.
                guard "\(error)".contains("org.freedesktop.Secret.Error.IsLocked") else {
                    throw CommandFailure(message: "cannot write to \(peer.name): \(error)")
                }
                out.line(
                    "\(peer.name) (\(owner.description)) keeps its collection locked (it started without your login "
                        + "password), so \(DesktopCommand.items(items.count)) wait in the keychain: log in again, then "
                        + "run `latchkey desktop disable` again")
                return 1
            }
            out.line(
                "copied \(DesktopCommand.items(report.copied)) into \(peer.name) (\(owner.description)), "
                    + "\(report.present) already there")
            guard report.locked == 0 else {
                out.line(
                    "\(DesktopCommand.items(report.locked)) refused: \(peer.name)'s default collection is locked; "
                        + "unlock it, then run `latchkey desktop disable` again")
                return 1
            }
        }
        if !dryRun { try DesktopRecord.remove(paths) }
        out.line(
            dryRun
                ? "remove the record \(paths.record)"
                : "\(peer?.name ?? "no provider") holds org.freedesktop.secrets again; the record \(paths.record) is removed; "
                    + "the keychain keeps every item")
        return 0
    }

    /// latchkeyd lets go of the name (restarted without its Secret Service by the user manager, or stopped),
    /// and the provider is started by its unit or by the bus.
    private func handBack(to peer: DesktopPeer?) throws {
        let owner: DesktopSession.Owner?
        do {
            owner = try session.owner()
        } catch {
            throw CommandFailure(message: "the session bus cannot be reached: \(error)")
        }
        if let owner, owner.isLatchkey {
            if dryRun {
                out.line("stop latchkeyd's Secret Service (\(owner.description))")
            } else if session.hasUserManager {
                try session.systemctl(["daemon-reload"])
                try session.systemctl(["restart", "latchkeyd.service"])
                guard session.waitForOwner(seconds: 15, { $0?.isLatchkey != true }) else {
                    throw CommandFailure(message: "latchkeyd still holds org.freedesktop.secrets after its restart")
                }
                out.line("restarted latchkeyd.service without the Secret Service")
            } else {
                out.line(try session.stop(owner))
            }
        }
        guard let peer, !dryRun else {
            if let peer { out.line("start \(peer.name)") }
            return
        }
        do {
            if try session.owner()?.peer == peer { return }  // Already back (an earlier run started it).
        } catch {
            // Not answered now: the start below reaches the bus again, and says so when it cannot.
        }
        if session.hasUserManager, let unit = peer.units.first(where: { paths.unitFile($0) != nil }) {
            try session.systemctl(["daemon-reload"])
            try session.systemctl(["start", unit])
            out.line("started \(unit)")
        } else {
            do throws(BusError) {
                try session.activate()
                out.line("the bus started \(peer.name) for org.freedesktop.secrets")
            } catch {
                out.line("the bus cannot start \(peer.name) now (\(error))")
            }
        }
        _ = session.waitForOwner(seconds: 15) { $0?.peer == peer }
    }
}
