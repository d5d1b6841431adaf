internal import Foundation
private import Security

// `private import Security`: the CF and Security names serve this file's private declarations.

private struct PrivateQuery {
    let status: OSStatus
    func dictionary() -> CFDictionary {
        [kSecClass: kSecClassGenericPassword, kSecReturnData: kCFBooleanTrue!] as CFDictionary
    }
}

private func message(_ status: OSStatus) -> String? { SecCopyErrorMessageString(status, nil) as String? }

func privatelyImportedStatusMessage(_ code: Int32) -> String? { message(code) }

func privatelyImportedQueryCount() -> Int { PrivateQuery(status: errSecSuccess).dictionary().count }
