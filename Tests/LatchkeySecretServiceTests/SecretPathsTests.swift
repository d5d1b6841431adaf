import Foundation
import LatchkeyCrypto
import LatchkeyPOSIX
import Testing

@testable import LatchkeySecretService

/// The provider's object paths: an item path names its collection and reference exactly, and anything else
/// names nothing (a wrong path is `NoSuchObject`, never another item).
@Suite struct SecretPathsTests {
    let reference = Data((0..<32).map { UInt8($0 * 7 & 0xFF) })
    let sessionReference = Data((0..<16).map { UInt8(0xF0 - $0) })

    @Test func anItemPathNamesItsCollectionAndReference() throws {
        let path = SecretPaths.item(reference, in: SecretPaths.collection)
        #expect(path == "/org/freedesktop/secrets/collection/login/" + Hex.encode(reference))
        let parsed = try #require(SecretPaths.parseItem(path))
        #expect(parsed.collection == SecretPaths.collection)
        #expect(parsed.reference == reference)

        let uppercase = "/org/freedesktop/secrets/collection/made_2/" + Hex.encode(reference, uppercase: true)
        let other = try #require(SecretPaths.parseItem(uppercase))
        #expect(other.collection == "/org/freedesktop/secrets/collection/made_2")
        #expect(other.reference == reference)

        let session = try #require(
            SecretPaths.parseItem(SecretPaths.item(sessionReference, in: SecretPaths.sessionCollection)))
        #expect(session.collection == SecretPaths.sessionCollection)
        #expect(session.reference == sessionReference)
    }

    @Test func anItemUnderAnAliasIsInTheCollectionTheAliasNames() throws {
        let hex = Hex.encode(reference)
        let viaDefault = try #require(SecretPaths.parseItem("/org/freedesktop/secrets/aliases/default/" + hex))
        #expect(viaDefault.collection == SecretPaths.collection)
        #expect(viaDefault.reference == reference)
        var asked: [String] = []
        let moved = SecretPaths.parseItem("/org/freedesktop/secrets/aliases/work/" + hex) { name in
            asked.append(name)
            return "/org/freedesktop/secrets/collection/c1"
        }
        #expect(asked == ["work"])
        #expect(moved?.collection == "/org/freedesktop/secrets/collection/c1")
        #expect(SecretPaths.parseItem("/org/freedesktop/secrets/aliases/nothing/" + hex) == nil)
    }

    @Test func malformedItemPathsNameNothing() {
        let hex = Hex.encode(reference)
        let sessionHex = Hex.encode(sessionReference)
        let login = "/org/freedesktop/secrets/collection/login/"
        var malformed: [String] = []
        malformed.append("/org/freedesktop/secrets/collection/login")  // a collection, not an item
        malformed.append(login)  // no reference
        malformed.append(login + String(hex.dropLast()))  // odd length
        malformed.append(login + String(hex.dropLast(2)))  // 31 bytes
        malformed.append(login + hex + "00")  // 33 bytes
        malformed.append(login + sessionHex)  // a session item's length elsewhere
        // a keychain item's length in the session
        malformed.append("/org/freedesktop/secrets/collection/session/" + hex)
        malformed.append(login + String(hex.dropLast()) + "g")  // not a digit
        malformed.append(login + String(hex.dropLast(2)) + "é")  // a multi-byte character
        malformed.append("/org/freedesktop/secrets/collection/login/x/" + hex)  // a path too deep
        malformed.append("/org/freedesktop/secrets/collection//" + hex)  // no collection id
        malformed.append("/org/freedesktop/secrets/collection/lo-gin/" + hex)  // not an id
        malformed.append("/org/freedesktop/secrets/collection/lögin/" + hex)  // not ASCII
        malformed.append("/org/freedesktop/secrets/items/login/" + hex)  // another prefix
        malformed.append("/org/freedesktop/secrets/aliases/default/" + hex + "/more")
        for path in malformed { #expect(SecretPaths.parseItem(path) == nil, "\(path)") }
    }

    @Test func collectionPathsAreCanonicalAndAliasesResolve() {
        #expect(SecretPaths.collection(of: "/org/freedesktop/secrets/collection/login") == SecretPaths.collection)
        #expect(
            SecretPaths.collection(of: "/org/freedesktop/secrets/collection/c_2")
                == "/org/freedesktop/secrets/collection/c_2")
        #expect(SecretPaths.collection(of: "/org/freedesktop/secrets/aliases/default") == SecretPaths.collection)
        #expect(SecretPaths.collection(of: "/org/freedesktop/secrets/aliases/session") == SecretPaths.sessionCollection)
        #expect(SecretPaths.collection(of: "/org/freedesktop/secrets/aliases/unknown") == nil)
        #expect(SecretPaths.collection(of: "/org/freedesktop/secrets/collection/") == nil)
        #expect(SecretPaths.collection(of: "/org/freedesktop/secrets/collection/login/" + Hex.encode(reference)) == nil)
        #expect(SecretPaths.collection(of: "/org/freedesktop/secrets/collection/lögin") == nil)
        #expect(SecretPaths.collection(of: "/org/freedesktop/secrets") == nil)
    }
}
