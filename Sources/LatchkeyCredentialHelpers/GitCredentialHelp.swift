extension GitCredentialHelper {
    /// `git-credential-latchkey --help`.
    static let help = """
        usage: git-credential-latchkey <get|store|erase>

        A git credential helper that keeps passwords and tokens in the Latchkey keychain. git runs it; you
        set it up once:

            git config --global credential.helper latchkey

        Each credential is an internet password (kSecClassInternetPassword) with the attributes
        git-credential-osxkeychain writes on a Mac: protocol (https, http, ftp, ftps, imap, imaps, smtp; other
        protocols are left to the next helper), server, port, path (with credential.useHttpPath) and account.
        password_expiry_utc and oauth_refresh_token are kept with the password; `erase` removes an item only
        when its password is the one git names. The items go to the access group git-credential-latchkey
        (LATCHKEY_APPLICATION_ID names another); `latchkey find-internet-password -s HOST -w` shows one.

        The keychain is the default one ($LATCHKEY_KEYCHAIN, else ~/.local/share/latchkey/login.keychain).
        When latchkeyd serves it and this helper is registered with it, nothing is asked once the keychain
        is unlocked:

            latchkey register-application --app-id git-credential-latchkey --access-group git-credential-latchkey "$(command -v git-credential-latchkey)"

        Otherwise the helper opens the keychain itself and asks for its passphrase on the terminal
        (LATCHKEY_PASSPHRASE supplies it without one). With no terminal (ssh without a tty, CI, cron) it fails
        at once instead of waiting, and git goes on without it.

        Exit status: 0 when done (also when nothing matched, and for an incomplete credential, a protocol it
        does not keep or an operation it does not know); 64 usage error; 65 input that breaks git's protocol
        (a line without '=', a NUL byte, a line over 65,535 bytes, over 1 MiB in all, a host's port that is no
        number); otherwise the low byte of the keychain's status, as latchkey exits (36: locked, and no one to
        ask for the passphrase; 51: wrong passphrase).

        """
}
