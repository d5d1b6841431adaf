extension DockerCredentialHelper {
    /// `docker-credential-latchkey --help`.
    static let help = """
        Usage: docker-credential-latchkey <store|get|erase|list|version>

        A docker credential helper that keeps registry logins in the Latchkey keychain. docker runs it; you
        set it up once, in ~/.docker/config.json:

            { "credsStore": "latchkey" }

        store reads {"ServerURL": …, "Username": …, "Secret": …} (Username "<token>" for an identity token);
        get and erase read a server URL and get prints the same JSON; list prints {"URL": "user name", …}
        from the items' attributes alone, reading no secret; version prints the version.

        Each login is an internet password (kSecClassInternetPassword) labelled "Docker Credentials", with
        the attributes docker-credential-osxkeychain writes on a Mac: protocol (https unless the URL says
        http), server, port, path and account. The items go to the access group docker-credential-latchkey
        (LATCHKEY_APPLICATION_ID names another).

        The keychain is the default one ($LATCHKEY_KEYCHAIN, else ~/.local/share/latchkey/login.keychain).
        When latchkeyd serves it and this helper is registered with it, no pull asks for anything once the
        keychain is unlocked:

            latchkey register-application --app-id docker-credential-latchkey --access-group docker-credential-latchkey "$(command -v docker-credential-latchkey)"

        Otherwise the helper opens the keychain itself and asks for its passphrase on the terminal
        (LATCHKEY_PASSPHRASE supplies it without one); with no terminal it fails at once instead of waiting.

        Exit status: 0 when done; 1 for every failure, with the message on standard output as docker expects:
        "credentials not found in native keychain" for a missing login, "no credentials server URL" and
        "no credentials username" for a request without them, and a message for input that is not JSON,
        holds a key other than ServerURL, Username and Secret, or is over 1 MiB.

        Server URLs are read strictly, so that no two readers disagree on the host: user information (an @
        before the host), a backslash, a space or any character RFC 3986 does not allow, a percent sign in
        the host, and a malformed escape, port or IPv6 literal are refused.

        """
}
