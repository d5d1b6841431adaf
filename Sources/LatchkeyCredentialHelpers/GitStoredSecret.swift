import Foundation

/// An internet password's secret as git-credential-osxkeychain writes it: the password, then a
/// `\npassword_expiry_utc=…` line and a `\noauth_refresh_token=…` line when git gave them. A password holds
/// no newline (the protocol cannot carry one), so the first line is always the password; later lines of
/// other names are ignored, so a Mac's item and this helper's read the same.
struct GitStoredSecret: Equatable {
    /// The password.
    var password: [UInt8]
    /// `password_expiry_utc`, when stored.
    var passwordExpiry: [UInt8]?
    /// `oauth_refresh_token`, when stored.
    var oauthRefreshToken: [UInt8]?

    private static let expiryKey = Array("password_expiry_utc=".utf8)
    private static let refreshKey = Array("oauth_refresh_token=".utf8)

    /// The stored bytes.
    var data: Data {
        var bytes = Data(password)
        if let passwordExpiry {
            bytes.append(UInt8(ascii: "\n"))
            bytes.append(contentsOf: Self.expiryKey)
            bytes.append(contentsOf: passwordExpiry)
        }
        if let oauthRefreshToken {
            bytes.append(UInt8(ascii: "\n"))
            bytes.append(contentsOf: Self.refreshKey)
            bytes.append(contentsOf: oauthRefreshToken)
        }
        return bytes
    }

    /// The parts of stored bytes.
    init(data: Data) {
        let lines = Array(data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        password = Array(lines.first ?? [])
        for line in lines.dropFirst() {
            if line.starts(with: Self.expiryKey) { passwordExpiry = Array(line.dropFirst(Self.expiryKey.count)) }
            if line.starts(with: Self.refreshKey) { oauthRefreshToken = Array(line.dropFirst(Self.refreshKey.count)) }
        }
    }

    /// The secret of a credential git gave.
    init(password: [UInt8], passwordExpiry: [UInt8]?, oauthRefreshToken: [UInt8]?) {
        self.password = password
        self.passwordExpiry = passwordExpiry
        self.oauthRefreshToken = oauthRefreshToken
    }
}
