public import Foundation
import Latchkey

/// `kSecImportExportPassphrase` ("passphrase"): the PKCS #12 file's passphrase (a string).
public var kSecImportExportPassphrase: CFString { SecConstant("passphrase") }
/// `kSecImportItemLabel` ("label"): the friendly name.
public var kSecImportItemLabel: CFString { SecConstant("label") }
/// `kSecImportItemKeyID` ("keyid"): the local key ID.
public var kSecImportItemKeyID: CFString { SecConstant("keyid") }
/// `kSecImportItemTrust` ("trust"): a `SecTrust` of the chain under the basic X.509 policy.
public var kSecImportItemTrust: CFString { SecConstant("trust") }
/// `kSecImportItemCertChain` ("chain"): the certificates, the identity's first (`[SecCertificate]`).
public var kSecImportItemCertChain: CFString { SecConstant("chain") }
/// `kSecImportItemIdentity` ("identity"): the `SecIdentity`.
public var kSecImportItemIdentity: CFString { SecConstant("identity") }

/// `SecPKCS12Import`: decrypts a PKCS #12 file (passphrase in `kSecImportExportPassphrase`; none means
/// empty) into one dictionary with the identity, the certificate chain, the label and the key ID. As on
/// iOS, nothing is added to the keychain (add the identity with `SecItemAdd` and `kSecValueRef`). A wrong
/// passphrase is `errSecAuthFailed`; bytes that are not PKCS #12 `errSecDecode`. Files from older tools
/// (RC2-40, Triple DES) open through OpenSSL's legacy provider. `kSecImportItemTrust` is a `SecTrust` of the
/// file's chain under the basic X.509 policy, not yet evaluated.
public func SecPKCS12Import(_ pkcs12_data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>)
    -> OSStatus
{
    var passphrase = ""
    for (key, value) in options where (key as? String) == kSecImportExportPassphrase as String {
        guard let text = value as? String else { return errSecParam }
        passphrase = text
    }
    let contents: PKCS12Contents
    do {
        contents = try PKCS12Contents(Data(referencing: pkcs12_data), passphrase: passphrase)
    } catch {
        return error.kind.rawValue
    }
    var item: [String: Any] = [
        kSecImportItemCertChain as String: NSArray(array: contents.certificates.map(SecCertificate.init))
    ]
    if let identity = contents.identity { item[kSecImportItemIdentity as String] = SecIdentity(identity) }
    item[kSecImportItemTrust as String] = SecTrust(
        TrustEvaluation(certificates: contents.certificates, policies: [.basicX509]))
    if let label = contents.label { item[kSecImportItemLabel as String] = NSString(string: label) }
    if let keyID = contents.keyID { item[kSecImportItemKeyID as String] = NSData(data: keyID) }
    items.pointee = NSArray(array: [NSDictionary(dictionary: item)])
    return errSecSuccess
}
