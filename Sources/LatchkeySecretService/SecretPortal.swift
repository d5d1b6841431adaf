import FoundationEssentials
import LatchkeyCrypto
import LatchkeyEngine

/// The secret portal's backend, `org.freedesktop.impl.portal.Secret` on `/org/freedesktop/portal/desktop`
/// (xdg-desktop-portal calls it for a sandboxed app's `org.freedesktop.portal.Secret.RetrieveSecret`, naming
/// the app by the app ID it read from the sandbox): the app's master secret, written to the descriptor given.
///
/// Each app's secret is 64 random bytes, made at its first request and the same at every later one: a keychain
/// item of its own access group `org.latchkey.portal` (service `org.freedesktop.impl.portal.Secret`, account
/// the app ID). No Secret Service client sees it — they act as group `org.freedesktop.secrets` (shared
/// policy) or as themselves (isolated) — unlike GNOME Keyring, oo7 and KWallet, which keep it as an ordinary
/// item `secret-tool search` lists. As a keychain item it is byte-identical across restarts, in backups, and
/// untouched by `import --from-secret-service`.
enum SecretPortal {
    static let path = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.impl.portal.Secret"
    static let group = "org.latchkey.portal"
    static let service = "org.freedesktop.impl.portal.Secret"
    static let secretLength = 64
    /// Who the portal's items are stored as: its own group, which no Secret Service caller has.
    static let caller = CallerIdentity(applicationIdentifier: group, accessGroups: [group])

    static let introspection = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg name="data" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
            <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.impl.portal.Secret">
            <method name="RetrieveSecret"><arg name="handle" type="o" direction="in"/><arg name="app_id" type="s" direction="in"/><arg name="fd" type="h" direction="in"/><arg name="options" type="a{sv}" direction="in"/><arg name="response" type="u" direction="out"/><arg name="results" type="a{sv}" direction="out"/></method>
            <property name="version" type="u" access="read"/>
          </interface>
        </node>

        """

    /// Whether `id` is an application ID as Flatpak and D-Bus define them: at least two dot-separated
    /// elements of ASCII letters, digits, `_` and `-`, none empty or starting with a digit, 255 bytes at most.
    static func isValidAppID(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= 255 else { return false }
        let elements = id.split(separator: ".", omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            // ASCII only (checked below), so a digit is 0-9 and a letter or digit an ASCII one.
            guard let first = element.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return element.unicodeScalars.allSatisfy { isASCIIAlphanumeric($0) || $0 == "_" || $0 == "-" }
        }
    }

    private static func query(_ appID: String, returning: ReturnOptions) -> ItemQuery {
        ItemQuery(
            .genericPassword, matching: [.service: .string(service), .account: .string(appID)], returning: returning)
    }

    /// The app's secret, made now if it has none; `made` says whether it was.
    static func secret(for appID: String, in services: (CallerIdentity) -> any KeychainService)
        throws(KeychainError) -> (secret: Data, made: Bool)
    {
        let service = services(caller)
        do {
            if let found = try service.copyMatching(query(appID, returning: .data)).first?.data {
                return (found, false)
            }
        } catch KeychainError.itemNotFound {
            // None yet: made below.
        }
        let secret = Data(SecureRandom.bytes(secretLength))
        _ = try service.add(
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string(Self.service), .account: .string(appID),
                    .label: .string("Secret portal: \(appID)"),
                ], data: secret), returning: [])
        return (secret, true)
    }

    /// Removes a secret made for a request that then failed (nothing stays of it).
    static func forget(_ appID: String, in services: (CallerIdentity) -> any KeychainService) {
        do {
            _ = try services(caller).delete(query(appID, returning: []))
        } catch {
            // Nothing to undo if it is gone already; the request's own error is what the caller sees.
        }
    }
}
