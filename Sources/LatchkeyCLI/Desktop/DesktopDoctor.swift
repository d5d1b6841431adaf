import FoundationEssentials
import Latchkey

/// `latchkey doctor --desktop [--json]`: who holds org.freedesktop.secrets and which activation files name it,
/// the other providers' units and autostart entries, what the next login of each login screen will do (read
/// from its PAM stack), the portal's routing and xdg-desktop-portal's version, whether the agent runs and is
/// unlocked. Each problem comes with a `fix:`; the exit status is 1 when there is an error.
struct DesktopDoctor {
    /// One finding.
    struct Finding: Codable, Equatable {
        let check: String
        let level: String
        let message: String
        let fix: String?
    }

    /// Everything `--json` prints.
    struct Report: Codable {
        var enabled: Bool
        var owner: Owner?
        var xdgDesktopPortal: String?
        var logins: [DesktopLogins.Verdict] = []
        var findings: [Finding] = []

        struct Owner: Codable {
            let pid: Int32
            let program: String
            let unit: String?
            let provider: String
        }
    }

    let context: CLIContext
    let paths: DesktopPaths
    let session: DesktopSession
    var report: Report

    init(context: CLIContext) throws {
        self.context = context
        paths = DesktopPaths(environment: context.environment)
        session = DesktopSession(paths: paths, environment: context.environment)
        report = Report(enabled: try DesktopRecord.load(paths) != nil)
    }

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws -> Int32 {
        var doctor = try DesktopDoctor(context: context)
        doctor.checkOwner()
        doctor.checkActivation()
        doctor.checkPeers()
        doctor.checkLogins()
        doctor.checkPortal()
        doctor.checkAgent()
        let report = doctor.report
        if arguments.has(.json) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            context.stdout.write(try encoder.encode(report))
            context.stdout.line("")
        } else {
            for finding in report.findings {
                context.stdout.line(finding.level.padded(to: 8) + " " + finding.message)
                if let fix = finding.fix { context.stdout.line(String(repeating: " ", count: 9) + "fix: " + fix) }
            }
        }
        return report.findings.contains { $0.level == "error" } ? 1 : 0
    }

    mutating func add(_ check: String, _ level: String, _ message: String, fix: String? = nil) {
        report.findings.append(Finding(check: check, level: level, message: message, fix: fix))
    }

    mutating func checkOwner() {
        let owner: DesktopSession.Owner?
        do {
            owner = try session.owner()
        } catch {
            add(
                "owner", "error", "the session bus cannot be reached (\(error))",
                fix: "run it inside the desktop session")
            return
        }
        guard let owner else {
            add(
                "owner", "ok",
                "org.freedesktop.secrets: no one holds it now; the bus starts the first activation file's provider on the first request"
            )
            return
        }
        let provider = owner.isLatchkey ? "Latchkey" : owner.peer?.name ?? "unknown"
        report.owner = Report.Owner(pid: owner.pid, program: owner.program, unit: owner.unit, provider: provider)
        if report.enabled && !owner.isLatchkey {
            add(
                "owner", "error",
                "org.freedesktop.secrets: \(provider) holds it (\(owner.description)), though `latchkey desktop enable` switched this user to Latchkey",
                fix:
                    "systemctl --user stop \(owner.unit ?? "it") && systemctl --user restart latchkeyd.service, or log in again; `latchkey desktop enable` puts back a change that went missing"
            )
        } else {
            add("owner", "ok", "org.freedesktop.secrets: \(provider) holds it (\(owner.description))")
        }
    }

    mutating func checkActivation() {
        let files = DesktopBusFiles.activationFiles(paths)
        guard let first = files.first else {
            add(
                "activation", report.enabled ? "error" : "ok", "no activation file names org.freedesktop.secrets",
                fix: report.enabled ? "latchkey desktop enable" : nil)
            return
        }
        for (index, file) in files.enumerated() {
            let starts = file.systemdService.map { "the unit \($0)" } ?? file.exec
            add(
                "activation", "ok",
                "activation file \(file.path) starts \(starts)\(index == 0 ? " (the first: the bus uses it)" : " (shadowed by the first)")"
            )
        }
        let latchkeys = first.systemdService == "latchkeyd.service" || first.exec.contains("latchkeyd")
        if report.enabled && !latchkeys {
            add(
                "activation", "error", "the bus starts \(first.exec) for org.freedesktop.secrets, not latchkeyd",
                fix: "latchkey desktop enable")
        }
    }

    mutating func checkPeers() {
        for peer in DesktopPeer.installed(paths) {
            for unit in peer.units {
                guard let file = paths.unitFile(unit) else { continue }
                let held = FileManager.default.fileExists(atPath: paths.userUnits + "/\(unit).d/latchkey.conf")
                let wanted = (["/etc/systemd/user", paths.userUnits].map { paths.systemRoot + $0 } + [paths.userUnits])
                    .contains { directory in
                        FileManager.default.contentsOfDirectoryIfPresent(directory).contains {
                            $0.hasSuffix(".wants")
                                && FileManager.default.fileExists(atPath: directory + "/" + $0 + "/" + unit)
                        }
                    }
                let state = "\(peer.name)'s unit \(unit) (\(file)) is \(wanted ? "enabled" : "not enabled")"
                if report.enabled && !held && wanted {
                    add("peer", "error", state + " and nothing keeps it from starting", fix: "latchkey desktop enable")
                } else {
                    add("peer", "ok", state + (held ? ", kept from starting by latchkey desktop's drop-in" : ""))
                }
            }
            for entry in peer.autostart
            where FileManager.default.fileExists(atPath: paths.systemAutostart + "/" + entry) {
                let hidden = DesktopBusFiles.isHidden(paths, entry)
                let state =
                    "\(peer.name)'s autostart entry \(paths.systemAutostart)/\(entry) is \(hidden ? "hidden for this user" : "active")"
                if report.enabled && !hidden {
                    add("peer", "error", state, fix: "latchkey desktop enable")
                } else {
                    add("peer", "ok", state)
                }
            }
        }
    }

    mutating func checkLogins() {
        let keychain = context.keychainPath(nil)
        let unattended: Bool
        if FileManager.default.fileExists(atPath: keychain), let tpm = KeychainDatabase.inspect(at: keychain).tpm {
            unattended = !tpm.unattendedPCRs.isEmpty || tpm.policyKeyFingerprint != nil
        } else {
            unattended = false
        }
        for (service, name) in DesktopLogins.screens {
            guard let stack = PAMStack(service: service, directory: paths.system("/etc/pam.d")) else { continue }
            let verdict = DesktopLogins.verdict(stack, name: name, unattendedTPM: unattended)
            report.logins.append(verdict)
            add(
                "login", verdict.level,
                "\(name) (/etc/pam.d/\(service)): \(verdict.outcome.rawValue): \(verdict.reason)", fix: verdict.fix)
        }
    }

    mutating func checkPortal() {
        let directory = paths.system("/usr/share/xdg-desktop-portal/portals")
        let backends = FileManager.default.contentsOfDirectoryIfPresent(directory).sorted().filter { name in
            guard name.hasSuffix(".portal"), let text = FileManager.default.textIfRegularFile(directory + "/" + name)
            else {
                return false
            }
            return KeyValueFile(text: text).value("portal", "Interfaces")?.contains(
                "org.freedesktop.impl.portal.Secret") == true
        }
        report.xdgDesktopPortal = debianVersion("xdg-desktop-portal")
        let version =
            report.xdgDesktopPortal.map { "xdg-desktop-portal \($0)" }
            ?? "xdg-desktop-portal not installed (or not a Debian package)"
        let preferred = KeyValueFile(text: FileManager.default.textIfRegularFile(paths.portalsConf) ?? "")
            .value("preferred", "org.freedesktop.impl.portal.Secret")
        let routing = preferred.map { "portals.conf prefers \($0)" } ?? "no portals.conf preference for it"
        add(
            "portal", "ok",
            "secret portal backends: \(backends.isEmpty ? "none" : backends.joined(separator: ", ")); \(version); \(routing); before 1.17 the portal calls whoever holds org.freedesktop.secrets"
        )
        if report.enabled && !backends.contains("latchkey.portal") {
            add(
                "portal", "error", "latchkey.portal is not in \(directory)",
                fix: "reinstall the package (sudo apt install --reinstall latchkey)")
        }
        if report.enabled && preferred != "latchkey" {
            add(
                "portal", "error", "the secret portal is not routed to Latchkey in \(paths.portalsConf)",
                fix: "latchkey desktop enable")
        }
    }

    mutating func checkAgent() {
        let keychain = context.keychainPath(nil)
        guard FileManager.default.fileExists(atPath: keychain) else {
            add(
                "agent", report.enabled ? "error" : "warning", "no keychain at \(keychain) yet",
                fix: "log in with your password (pam_latchkey's create), or `latchkey create-keychain`")
            return
        }
        do {
            if let client = try AgentAccess.client(for: keychain, context: context) {
                let status = try client.status()
                let pid = status.agentProcessIdentifier.map(String.init) ?? "?"
                if status.lockState == .unlocked {
                    add("agent", "ok", "latchkeyd (pid \(pid)) serves \(keychain), unlocked")
                } else {
                    add(
                        "agent", "warning", "latchkeyd (pid \(pid)) serves \(keychain), \(status.lockState)",
                        fix: "latchkey unlock-keychain")
                }
            } else {
                add(
                    "agent", report.enabled ? "error" : "warning", "latchkeyd does not run for \(keychain)",
                    fix: "systemctl --user start latchkeyd.socket latchkeyd.service")
            }
        } catch {
            add(
                "agent", "error", "an agent socket is there but the agent cannot be asked: \(error)",
                fix: "systemctl --user restart latchkeyd.service")
        }
    }

    /// A package's installed version, as `dpkg-query` tells it (under the system root when there is one); nil
    /// when it is not installed, or there is no dpkg.
    func debianVersion(_ package: String) -> String? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-query") else { return nil }
        let root = paths.systemRoot.isEmpty ? [] : ["--root=" + paths.systemRoot]
        let answer: (Int32, String)
        do {
            answer = try DesktopSession.run(
                "/usr/bin/dpkg-query", root + ["-W", "-f=${db:Status-Status} ${Version}", package],
                environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C"], errors: false)
        } catch {
            return nil  // dpkg-query could not be started: the version is not known, as on a system without dpkg.
        }
        guard answer.0 == 0, answer.1.hasPrefix("installed ") else { return nil }
        return String(answer.1.dropFirst("installed ".count))
    }
}
