import FoundationEssentials
import LatchkeyEngine

/// `org.freedesktop.Secret.Session` on each session `OpenSession` made (SecretServiceServer+Service.swift):
/// closing it; and finding a caller's session for the methods that send or take secrets.
extension SecretServiceServer {
    /// The session at `path` if connection `caller` opened it, or `NoSession`.
    func session(_ path: String, caller: String) throws -> (path: String, session: SecretSessions.Session) {
        guard let session = sessions.session(path, caller: caller) else {
            throw SecretServiceError.noSession("the session \(path) is not one of yours")
        }
        return (path, session)
    }

    /// `Close`: ends the session at `path`, one of `sender`'s.
    func closeSession(_ path: String, for sender: String) throws {
        guard sessions.close(path, caller: sender) else {
            throw SecretServiceError.noSession("no such session of yours")
        }
    }
}
