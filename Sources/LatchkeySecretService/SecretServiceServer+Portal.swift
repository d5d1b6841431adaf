import FoundationEssentials
import LatchkeyCrypto
import LatchkeyDBus
import LatchkeyEngine
import LatchkeyPOSIX

/// `org.freedesktop.impl.portal.Secret` on `/org/freedesktop/portal/desktop` (SecretPortal.swift): an app's
/// master secret, written to the descriptor xdg-desktop-portal gives; with its `version` property. The
/// arguments are decoded and the replies encoded by `portalCall` (SecretServiceServer+Marshalling.swift).
extension SecretServiceServer {
    /// The portal interface's version.
    static let portalVersion: UInt32 = 1

    /// Answers a call on the portal's object; false for a method it does not have.
    func handlePortal(_ message: BusMessage) -> Bool {
        do {
            guard let reply = try portalCall(message) else { return false }
            try bus.send(reply)
        } catch let error as SecretServiceError {
            bus.fail(message, name: error.name, error.message)
        } catch let error as KeychainError {
            let mapped = SecretServiceError(error)
            bus.fail(message, name: mapped.name, mapped.message)
        } catch {
            bus.fail(message, name: "org.freedesktop.DBus.Error.InvalidArgs", "\(error)")
        }
        return true
    }

    /// Who may call `RetrieveSecret`: another user's program is refused, and so is a sandboxed app (it asks
    /// through xdg-desktop-portal, which names it; it never names an app itself). Asked before the
    /// arguments are read.
    func checkPortalCaller(_ sender: String) throws {
        let caller = try caller(of: sender)
        if caller.accessGroups.contains(where: { $0.hasPrefix("flatpak:") }) {
            configuration.log(
                "refused RetrieveSecret from \(caller.applicationIdentifier): a sandboxed app asks through the portal")
            throw SecretServiceError.accessDenied("a sandboxed app asks through xdg-desktop-portal, not the backend")
        }
    }

    /// `RetrieveSecret`: writes app `appID`'s secret (made now if it has none) to `fd`.
    func retrieveSecret(for appID: String, to fd: FileDescriptor) throws {
        guard SecretPortal.isValidAppID(appID) else {
            throw SecretServiceError.invalidArguments(
                "\"\(appID)\" is not an application ID (reverse DNS, as org.example.App)")
        }
        guard fd.isOpenForWriting else {
            throw SecretServiceError.invalidArguments("the file descriptor is not open for writing")
        }
        guard try configuration.service(SecretPortal.caller, nil).status().lockState == .unlocked else {
            throw SecretServiceError.isLocked(
                "the keychain is locked; unlock it (latchkey unlock-keychain) and ask again")
        }
        let retrieved = try SecretPortal.secret(for: appID, in: { caller in configuration.service(caller, nil) })
        var secret = retrieved.secret
        let made = retrieved.made
        defer { secret.resetBytes(in: 0..<secret.count) }
        var bytes = Array(secret)
        defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
        do throws(Errno) {
            try fd.writeAll(bytes)
        } catch {
            if made { SecretPortal.forget(appID, in: { caller in configuration.service(caller, nil) }) }
            throw SecretServiceError.invalidArguments("cannot write the secret to the file descriptor: \(error)")
        }
        if made { configuration.log("made the secret portal's secret for \(appID)") }
    }
}
