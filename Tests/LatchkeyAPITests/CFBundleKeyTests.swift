import Foundation
import LatchkeySecurity
import LatchkeyTestSupport
import Testing

/// The Info.plist keys of Core Foundation (CFBundle.h) that code beside Security reads a bundle's settings with,
/// which swift-corelibs-foundation does not export: a keychain wrapper takes its default service from
/// `Bundle.main.infoDictionary?[kCFBundleIdentifierKey as String]`.
@Suite struct CFBundleKeyTests {
    /// Apple's values, as `String`s and as hashable keys.
    @Test func theKeysHaveApplesValues() {
        let keys: [(CFString?, String)] = [
            (kCFBundleInfoDictionaryVersionKey, "CFBundleInfoDictionaryVersion"),
            (kCFBundleExecutableKey, "CFBundleExecutable"), (kCFBundleIdentifierKey, "CFBundleIdentifier"),
            (kCFBundleVersionKey, "CFBundleVersion"), (kCFBundleDevelopmentRegionKey, "CFBundleDevelopmentRegion"),
            (kCFBundleNameKey, "CFBundleName"), (kCFBundleLocalizationsKey, "CFBundleLocalizations"),
        ]
        for (key, value) in keys {
            #expect(key.map { $0 as String } == value)
            #expect(key.map { AnyHashable($0) } == AnyHashable(value))
        }
    }

    /// A bundle's identifier and name read with the keys, as a wrapper reads its default service.
    @Test func aBundlesInfoDictionaryIsReadWithThem() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/Wrapper.bundle"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let plist: [String: Any] = [
            "CFBundleIdentifier": "com.example.wrapper", "CFBundleName": "Wrapper", "CFBundleVersion": "7",
        ]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
            .write(to: URL(fileURLWithPath: path + "/Info.plist"))
        let info = try #require(Bundle(path: path)?.infoDictionary)
        #expect(info[kCFBundleIdentifierKey as String] as? String == "com.example.wrapper")
        #expect(info[kCFBundleNameKey as String] as? String == "Wrapper")
        #expect(info[kCFBundleVersionKey as String] as? String == "7")
        #expect((info as [AnyHashable: Any])[kCFBundleIdentifierKey] as? String == "com.example.wrapper")
    }
}
