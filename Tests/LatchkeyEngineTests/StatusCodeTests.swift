import Latchkey
import LatchkeyTestSupport
import Testing

/// SEMANTICS.md §3: every status with Apple's value and message.
@Suite(.dedicatedThreads) struct StatusCodeTests {
    static let table: [(KeychainStatus, String, Int32, String)] = [
        (.success, "errSecSuccess", 0, "No error."),
        (.unimplemented, "errSecUnimplemented", -4, "Function or operation not implemented."),
        (.io, "errSecIO", -36, "I/O error."),
        (.param, "errSecParam", -50, "One or more parameters passed to a function were not valid."),
        (.allocate, "errSecAllocate", -108, "Failed to allocate memory."),
        (.userCanceled, "errSecUserCanceled", -128, "User canceled the operation."),
        (.notAvailable, "errSecNotAvailable", -25291, "No keychain is available."),
        (.readOnly, "errSecReadOnly", -25292, "This keychain cannot be modified."),
        (.authFailed, "errSecAuthFailed", -25293, "The user name or passphrase you entered is not correct."),
        (.duplicateItem, "errSecDuplicateItem", -25299, "The specified item already exists in the keychain."),
        (.itemNotFound, "errSecItemNotFound", -25300, "The specified item could not be found in the keychain."),
        (.noSuchAttribute, "errSecNoSuchAttr", -25303, "The specified attribute does not exist."),
        (.invalidItemRef, "errSecInvalidItemRef", -25304, "The specified item is no longer valid."),
        (.noSuchClass, "errSecNoSuchClass", -25306, "The specified item class does not exist."),
        (.interactionNotAllowed, "errSecInteractionNotAllowed", -25308, "User interaction is not allowed."),
        (.dataNotAvailable, "errSecDataNotAvailable", -25316, "The contents of this item cannot be retrieved."),
        (.decode, "errSecDecode", -26275, "Unable to decode the provided data."),
        (.internal, "errSecInternal", -26276, "An internal error occurred."),
        (.missingEntitlement, "errSecMissingEntitlement", -34018, "A required entitlement isn't present."),
        // Keychain-file statuses from SecBase.h that the engine uses beyond SEMANTICS.md's table.
        (.diskFull, "errSecDiskFull", -34, "The disk is full."),
        (.writePermission, "errSecWrPerm", -61, "Write permissions error."),
        (.noSuchKeychain, "errSecNoSuchKeychain", -25294, "The specified keychain could not be found."),
        (.invalidKeychain, "errSecInvalidKeychain", -25295, "The specified keychain is not a valid keychain file."),
        (.duplicateKeychain, "errSecDuplicateKeychain", -25296, "A keychain with the same name already exists."),
    ]

    @Test(arguments: table.indices)
    func valueNameAndMessage(_ index: Int) {
        let (status, name, value, message) = Self.table[index]
        #expect(status.rawValue == value)
        #expect(status.name == name)
        #expect(status.message == message)
        #expect(KeychainStatus(rawValue: value) == status)
    }

    @Test func unknownStatusesStillDescribeThemselves() {
        #expect(KeychainStatus(rawValue: -1234).message == "OSStatus -1234")
    }

    @Test func errorMessagesAppendTheDetail() {
        let error = KeychainError(.param, "attribute 'acct' must be a string or data, not a date value")
        #expect(
            error.message
                == "One or more parameters passed to a function were not valid. (attribute 'acct' must be a string or data, not a date value)"
        )
        #expect(KeychainError(.itemNotFound).message == "The specified item could not be found in the keychain.")
    }
}
