import Foundation
import LatchkeyTestSupport
import Testing

/// `-k` and `--keychain` name the keychain in every command that declares both: `sync` and `ssh-key` read the
/// option by its letter while the parser kept it under its long name, so `-k` was silently ignored and the
/// default keychain used. An option is now found by either of its names.
@Suite struct KeychainOptionTests {
    @Test(arguments: [["sync", "status"], ["ssh-key", "list"]], ["-k", "--keychain"])
    func theKeychainOptionIsTheKeychainUsed(command: [String], option: String) throws {
        let cli = CLISandbox()
        try cli.createKeychain()
        let missing = cli.directory.path + "/elsewhere.keychain"
        let output = try cli.run(command + [option, missing])
        #expect(output.status == 50)
        #expect(
            output.stderr
                == "latchkey: \(command[0]): The specified keychain could not be found. (\(missing) does not exist)\n")
        #expect(output.stdout == "")
    }
}
