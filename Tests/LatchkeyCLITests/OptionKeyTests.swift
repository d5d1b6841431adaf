import Testing

@testable import LatchkeyCLI

/// An option's key: its letter and long name written once, the same key whichever name is typed, and a key
/// of its own for each meaning of a letter.
@Suite struct OptionKeyTests {
    @Test func aKeyIsItsDeclarationNotItsLetter() {
        #expect(OptionKey.account.short == "a")
        #expect(OptionKey.everyKeychain.short == "a")
        #expect(OptionKey.account != .everyKeychain)
        #expect(OptionKey.account == .account)
        #expect(OptionKey.keychain != .keychainShort)
        #expect(Set([OptionKey.account, .everyKeychain, .allMatches, .algorithm]).count == 4)
    }

    @Test func messagesSpellAKeyByItsLongNameElseItsLetter() {
        #expect(OptionKey.keychain.spelling == "--keychain")
        #expect(OptionKey.keychainShort.spelling == "-k")
        #expect(OptionKey.passphraseFD.spelling == "--passphrase-fd")
        #expect("\(OptionKey.passwordHex)" == "-X")
    }

    @Test func aSpecTakesItsNamesFromItsKey() {
        let spec = OptionSpec(.keychain, .required, value: "keychain", "The keychain.")
        #expect(spec.short == "k")
        #expect(spec.long == "keychain")
        #expect(spec.display == "-k keychain, --keychain keychain")
        let flag = OptionSpec(.synchronizable, "Flag.")
        #expect(flag.short == nil)
        #expect(flag.long == "synchronizable")
        #expect(flag.argument == .none)
        #expect(flag.display == "--synchronizable")
    }

    /// `sync -k` and `ssh-key -k` were once ignored: the parser kept the value under `keychain` and the commands
    /// asked for `k`. There is one key now, whichever name was typed.
    @Test(arguments: [["-k", "kc"], ["-kkc"], ["--keychain", "kc"], ["--keychain=kc"], ["status", "-k", "kc"]])
    func anOptionIsReadByItsKeyWhicheverNameWasTyped(_ words: [String]) throws {
        let options = [
            OptionSpec(.keychain, .required, value: "keychain", "The keychain."),
            OptionSpec(.passphraseFD, .required, value: "fd", "A descriptor."),
        ]
        let parsed = try ArgumentParser.parse(words, options: options)
        #expect(parsed.value(.keychain) == "kc")
        #expect(parsed.has(.keychain))
        #expect(parsed.allValues(.keychain) == ["kc"])
        #expect(parsed.given == [.keychain])
        #expect(!parsed.has(.passphraseFD))
        #expect(parsed.value(.passphraseFD) == nil)
    }
}
