import FoundationEssentials
import Latchkey
import LatchkeyDBus

/// `desktop enable`: the provider's items copied in and counted, the provider kept from the name, Latchkey's
/// unit, activation file, Secret Service and portal turned on, then the running provider replaced.
struct DesktopEnable {
    let arguments: ParsedArguments
    let context: CLIContext
    let paths: DesktopPaths
    let session: DesktopSession
    let dryRun: Bool

    var out: any OutputSink { context.stdout }

    func run() throws -> Int32 {
        guard let agentUnit = paths.agentUnit else {
            throw CommandFailure(
                message: "latchkeyd.service is not installed (the Debian package puts it in /usr/lib/systemd/user; "
                    + "docs/INSTALL.md says where for other systems)")
        }
        var record = try DesktopRecord.load(paths) ?? DesktopRecord()
        if record.movingBack {
            throw CommandFailure(
                message: "`latchkey desktop disable` has not finished moving the items back; run it again first")
        }
        let owner: DesktopSession.Owner?
        do {
            owner = try session.owner()
        } catch {
            throw CommandFailure(message: "the session bus cannot be reached: \(error)")
        }
        let running = owner.flatMap { $0.isLatchkey ? nil : $0 }
        if let running, running.peer == nil {
            throw CommandFailure(
                message: "org.freedesktop.secrets is held by \(running.description), a provider latchkey desktop "
                    + "does not know how to keep from taking it (it knows \(DesktopPeer.all.map(\.name).joined(separator: ", "))); "
                    + "stop it, then run enable again")
        }
        if dryRun { out.line("dry run: nothing is changed") }
        // 1. Every item first, counted; nothing else changes while the provider keeps some locked.
        if let running, let peer = running.peer {
            let copied = try copyIn(from: peer, running)
            if !dryRun {
                record.peer = peer.id
                record.copiedIn += copied
                try record.save(paths)
            }
        }
        // 2. The provider (and every other one installed) kept from the name; Latchkey's files.
        var peers = DesktopPeer.installed(paths)
        if let peer = running?.peer ?? record.peer.flatMap(DesktopPeer.named), !peers.contains(peer) {
            peers.insert(peer, at: 0)
        }
        for var change in peers.flatMap({ $0.changes(paths, agentUnit: agentUnit) }) + latchkeyChanges(agentUnit) {
            if dryRun {
                if !change.isInPlace { out.line(change.description) }
                continue
            }
            if try change.apply() {
                record.changes.append(change)
                try record.save(paths)
                out.line(change.description)
            }
        }
        if !dryRun { reload() }
        // 3. The running provider replaced by latchkeyd.
        if let running, let peer = running.peer {
            if dryRun {
                out.line("copy what \(peer.name) stored meanwhile, then stop it (\(running.description))")
            } else {
                let more = try copyIn(from: peer, running, again: true)
                record.copiedIn += more
                try record.save(paths)
                out.line(try session.stop(running))
            }
        }
        try startAgent()
        if !dryRun { out.line("recorded in \(paths.record); `latchkey desktop disable` undoes it") }
        return 0
    }

    /// Copies the provider's items into the keychain and says how many; throws when some are locked there.
    private func copyIn(from peer: DesktopPeer, _ owner: DesktopSession.Owner, again: Bool = false) throws -> Int {
        let name = DesktopSession.busName
        if dryRun {
            let (collections, report) = try readable(peer)
            let count = collections.reduce(0) { $0 + $1.items.count }
            out.line("copy \(DesktopCommand.items(count)) from \(peer.name) (\(owner.description)) into the keychain")
            if report.locked + report.unreadable > 0 {
                out.line(
                    "stop there: \(DesktopCommand.items(report.locked + report.unreadable)) of \(peer.name) are locked; unlock them first"
                )
            }
            return count
        }
        let report: SecretServiceImport.Report
        do {
            report = try SecretServiceImport.copy(from: name, into: DesktopCommand.keychain(arguments, context))
        } catch let error as BusError {
            throw CommandFailure(message: "cannot read \(peer.name)'s items: \(error)")
        }
        let copied = report.copied.values.reduce(0, +)
        if !again || copied > 0 {
            let by = report.copied.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            out.line(
                "copied \(DesktopCommand.items(copied))\(again ? " stored meanwhile" : "") from \(peer.name) (\(owner.description)) "
                    + "into the keychain\(by.isEmpty ? "" : " (\(by))"), \(report.present) already there")
        }
        let locked = report.locked + report.unreadable
        guard locked == 0 else {
            throw CommandFailure(
                message: "\(DesktopCommand.items(locked)) of \(peer.name) are locked or gave no secret; unlock them "
                    + "(log in with your password, or in its own manager) and run `latchkey desktop enable` again: "
                    + "nothing but the copies above was changed")
        }
        return copied
    }

    private func readable(_ peer: DesktopPeer) throws -> (
        collections: [(label: String, items: [SecretServiceImport.SourceItem])], report: SecretServiceImport.Report
    ) {
        do throws(BusError) {
            return try SecretServiceImport.read(from: DesktopSession.busName)
        } catch {
            throw CommandFailure(message: "cannot read \(peer.name)'s items: \(error)")
        }
    }

    /// Latchkey's side: its unit enabled with the session and as the name's provider, its activation file, its
    /// Secret Service on, the secret portal pointed at it.
    private func latchkeyChanges(_ agentUnit: String) -> [DesktopChange] {
        var changes = [
            DesktopChange(
                kind: .link, path: paths.userUnits + "/default.target.wants/latchkeyd.service", content: agentUnit,
                why: "starts latchkeyd.service with the session"),
            DesktopChange(
                kind: .link, path: paths.userUnits + "/dbus-org.freedesktop.secrets.service", content: agentUnit,
                why: "makes latchkeyd.service the provider of org.freedesktop.secrets"),
        ]
        let activation = paths.userBusServices + "/org.freedesktop.secrets.service"
        if FileManager.default.fileExists(atPath: paths.packagedActivationFile) {
            changes.append(
                DesktopChange(
                    kind: .link, path: activation, content: paths.packagedActivationFile,
                    why: "the bus starts latchkeyd.service for org.freedesktop.secrets, before the system's files"))
        } else {
            changes.append(
                DesktopChange(
                    kind: .file, path: activation,
                    content:
                        "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=/bin/false\nSystemdService=latchkeyd.service\n",
                    why: "the bus starts latchkeyd.service for org.freedesktop.secrets, before the system's files"))
        }
        changes.append(
            DesktopChange(
                kind: .setting, path: paths.agentEnvironment, content: "1", key: "LATCHKEY_SECRET_SERVICE",
                why: "latchkeyd serves org.freedesktop.secrets"))
        changes.append(
            DesktopChange(
                kind: .setting, path: paths.portalsConf, content: "latchkey", section: "preferred",
                key: "org.freedesktop.impl.portal.Secret",
                why: "xdg-desktop-portal 1.17 and later send the secret portal to Latchkey; earlier ones call "
                    + "whoever holds org.freedesktop.secrets"))
        return changes
    }

    /// The bus reads the activation files again; a bus that cannot is said, not fatal (the next login's bus reads
    /// them at its start).
    private func reload() {
        do throws(BusError) {
            try session.reloadBus()
        } catch {
            out.line("the session bus did not read its activation files again (\(error)); it will at the next login")
        }
    }

    /// latchkeyd restarted with its Secret Service through the user manager, and waited for on the bus.
    private func startAgent() throws {
        guard session.hasUserManager else {
            out.line(
                "no systemd user manager answers here: latchkeyd takes org.freedesktop.secrets when it next starts "
                    + "with the Secret Service (log in again)")
            return
        }
        if dryRun {
            out.line("run systemctl --user daemon-reload, then systemctl --user restart latchkeyd.service")
            return
        }
        try session.systemctl(["daemon-reload"])
        try session.systemctl(["restart", "latchkeyd.service"])
        if session.waitForOwner(seconds: 30, { $0?.isLatchkey == true }), let owner = try session.owner() {
            out.line(
                "latchkeyd (\(owner.description)) holds org.freedesktop.secrets; its keychain is locked until the "
                    + "next login or `latchkey unlock-keychain`")
        } else {
            out.line(
                "latchkeyd.service restarted but does not hold org.freedesktop.secrets yet (it waits for its keychain); "
                    + "`latchkey doctor --desktop` says why")
        }
    }
}
