// The XCTest entry point for SwiftyKeychainKit's suite on Linux (swift build --experimental-test-entry-point-path),
// in place of the one SwiftPM discovers: its value tests are nine subclasses of a generic XCTestCase,
// AbstractKeychainTests<T>, which inherit every test. XCTest on Apple platforms finds inherited tests at run time;
// SwiftPM's discovery on Linux lists only methods declared in a class, and for the generic base emits a static
// stored property a generic type cannot have (it does not compile). This list is the discovery Apple's XCTest
// does: each concrete class with the tests it declares or inherits. Test-harness file only, none of Latchkey.
import XCTest
@testable import SwiftyKeychainKitTests

private func inherited<T>(_ type: AbstractKeychainTests<T>.Type) -> [(String, (AbstractKeychainTests<T>) -> () throws -> Void)] {
    [
        ("testGenericPassword", { $0.testGenericPassword }),
        ("testGenericPasswordDynamicCallable", { $0.testGenericPasswordDynamicCallable }),
        ("testGenericPasswordSubscripting", { $0.testGenericPasswordSubscripting }),
        ("testKeychainHasKey", { $0.testKeychainHasKey }),
        ("testKeychainRemoveAll", { $0.testKeychainRemoveAll }),
        ("testKeychainRemoveAllOfTypeGenericPassword", { $0.testKeychainRemoveAllOfTypeGenericPassword }),
        ("testKeychainRemoveAllOfTypeInternetPassword", { $0.testKeychainRemoveAllOfTypeInternetPassword }),
    ]
}

private func entries<C: XCTestCase, T>(_ type: C.Type, base: AbstractKeychainTests<T>.Type) -> XCTestCaseEntry {
    testCase(inherited(base).map { name, test in (name, { (instance: C) in test(instance as! AbstractKeychainTests<T>) }) })
}

XCTMain([
    entries(KeychainArchivableTests.self, base: AbstractKeychainTests<ArchivableObject>.self),
    entries(KeychainBoolTests.self, base: AbstractKeychainTests<Bool>.self),
    entries(KeychainCodableTests.self, base: AbstractKeychainTests<CodableObject>.self),
    entries(KeychainCustomTypeTests.self, base: AbstractKeychainTests<[String]>.self),
    entries(KeychainDataTests.self, base: AbstractKeychainTests<Data>.self),
    entries(KeychainDoubleTests.self, base: AbstractKeychainTests<Double>.self),
    entries(KeychainFloatTests.self, base: AbstractKeychainTests<Float>.self),
    entries(KeychainIntTests.self, base: AbstractKeychainTests<Int>.self),
    entries(KeychainStringTests.self, base: AbstractKeychainTests<String>.self),
    testCase([
        ("testKeychainAttributeElemet", AttributeTests.testKeychainAttributeElemet),
        ("testKeychainAttributeInitializer", AttributeTests.testKeychainAttributeInitializer),
        ("testKeychainCreationDateAttribute", AttributeTests.testKeychainCreationDateAttribute),
        ("testKeychainModificatioDateAttribute", AttributeTests.testKeychainModificatioDateAttribute),
    ]),
    testCase([
        ("testAccessibilityLevel", KeychainEnums.testAccessibilityLevel),
        ("testItemClass", KeychainEnums.testItemClass),
    ]),
    testCase([("testErrorType", KeychainErrorTests.testErrorType)]),
    testCase([
        ("testDefaultKeychainKeyConfiguration", KeychainKeyConfigurationTests.testDefaultKeychainKeyConfiguration),
        ("testModifyKeychainKeyConfiguration", KeychainKeyConfigurationTests.testModifyKeychainKeyConfiguration),
    ]),
    testCase([
        ("testGenericPasswordInitilizer", KeychainKeyTests.testGenericPasswordInitilizer),
        ("testInternetPasswordInitilizer", KeychainKeyTests.testInternetPasswordInitilizer),
        ("testInternetPasswordInitilizerWithURL", KeychainKeyTests.testInternetPasswordInitilizerWithURL),
    ]),
    testCase([
        ("testAllItems", KeychainTests.testAllItems),
        ("testGenericPasswordItems", KeychainTests.testGenericPasswordItems),
        ("testGetAttributesForGenericPassword", KeychainTests.testGetAttributesForGenericPassword),
        ("testGetAttributesForGenericPasswordWithDefaultInitilisers", KeychainTests.testGetAttributesForGenericPasswordWithDefaultInitilisers),
        ("testGetAttributesForInternetPasswordWithDefaultInitilisers", KeychainTests.testGetAttributesForInternetPasswordWithDefaultInitilisers),
        ("testGetInternetPasswordAttributes", KeychainTests.testGetInternetPasswordAttributes),
        ("testInitializer", KeychainTests.testInitializer),
        ("testInternetPasswordItems", KeychainTests.testInternetPasswordItems),
    ]),
])
