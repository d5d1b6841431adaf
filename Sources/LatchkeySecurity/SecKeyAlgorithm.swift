public import Foundation
public import Latchkey

/// `SecKeyAlgorithm`: which operation, padding and digest a key operation uses, with Apple's values
/// (`SecKeyAdaptors.m`). `SecKeyIsAlgorithmSupported` says which a key can run; the raw RSA algorithms, the
/// MD5 ones and the token-only ones are named but supported by no key.
public struct SecKeyAlgorithm: RawRepresentable, Hashable, Sendable {
    let text: String

    private init(text: String) { self.text = text }

    /// Wraps Apple's string.
    public init(rawValue: CFString) { self.text = rawValue as String }
    /// Wraps Apple's string.
    public init(_ rawValue: CFString) { self.init(rawValue: rawValue) }

    /// Apple's string ("algid:sign:ECDSA:message-X962:SHA256", …).
    public var rawValue: CFString { SecConstant(text) }

    /// The algorithm as LatchkeyPKI understands it.
    var keyAlgorithm: KeyAlgorithm { KeyAlgorithm(rawValue: text) }

    /// `kSecKeyAlgorithmRSASignatureRaw` ("algid:sign:RSA:raw").
    public static let rsaSignatureRaw = SecKeyAlgorithm(text: "algid:sign:RSA:raw")
    /// `kSecKeyAlgorithmRSASignatureDigestPKCS1v15Raw` ("algid:sign:RSA:digest-PKCS1v15").
    public static let rsaSignatureDigestPKCS1v15Raw = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PKCS1v15")
    /// `kSecKeyAlgorithmRSASignatureDigestPKCS1v15MD5` ("algid:sign:RSA:digest-PKCS1v15:MD5").
    public static let rsaSignatureDigestPKCS1v15MD5 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PKCS1v15:MD5")
    /// `kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA1` ("algid:sign:RSA:digest-PKCS1v15:SHA1").
    public static let rsaSignatureDigestPKCS1v15SHA1 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PKCS1v15:SHA1")
    /// `kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA224` ("algid:sign:RSA:digest-PKCS1v15:SHA224").
    public static let rsaSignatureDigestPKCS1v15SHA224 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PKCS1v15:SHA224")
    /// `kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA256` ("algid:sign:RSA:digest-PKCS1v15:SHA256").
    public static let rsaSignatureDigestPKCS1v15SHA256 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PKCS1v15:SHA256")
    /// `kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA384` ("algid:sign:RSA:digest-PKCS1v15:SHA384").
    public static let rsaSignatureDigestPKCS1v15SHA384 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PKCS1v15:SHA384")
    /// `kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA512` ("algid:sign:RSA:digest-PKCS1v15:SHA512").
    public static let rsaSignatureDigestPKCS1v15SHA512 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PKCS1v15:SHA512")
    /// `kSecKeyAlgorithmRSASignatureDigestPSSSHA1` ("algid:sign:RSA:digest-PSS:SHA1:SHA1:20").
    public static let rsaSignatureDigestPSSSHA1 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PSS:SHA1:SHA1:20")
    /// `kSecKeyAlgorithmRSASignatureDigestPSSSHA224` ("algid:sign:RSA:digest-PSS:SHA224:SHA224:24").
    public static let rsaSignatureDigestPSSSHA224 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PSS:SHA224:SHA224:24")
    /// `kSecKeyAlgorithmRSASignatureDigestPSSSHA256` ("algid:sign:RSA:digest-PSS:SHA256:SHA256:32").
    public static let rsaSignatureDigestPSSSHA256 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PSS:SHA256:SHA256:32")
    /// `kSecKeyAlgorithmRSASignatureDigestPSSSHA384` ("algid:sign:RSA:digest-PSS:SHA384:SHA384:48").
    public static let rsaSignatureDigestPSSSHA384 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PSS:SHA384:SHA384:48")
    /// `kSecKeyAlgorithmRSASignatureDigestPSSSHA512` ("algid:sign:RSA:digest-PSS:SHA512:SHA512:64").
    public static let rsaSignatureDigestPSSSHA512 = SecKeyAlgorithm(text: "algid:sign:RSA:digest-PSS:SHA512:SHA512:64")
    /// `kSecKeyAlgorithmRSASignatureMessagePKCS1v15MD5` ("algid:sign:RSA:message-PKCS1v15:MD5").
    public static let rsaSignatureMessagePKCS1v15MD5 = SecKeyAlgorithm(text: "algid:sign:RSA:message-PKCS1v15:MD5")
    /// `kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA1` ("algid:sign:RSA:message-PKCS1v15:SHA1").
    public static let rsaSignatureMessagePKCS1v15SHA1 = SecKeyAlgorithm(text: "algid:sign:RSA:message-PKCS1v15:SHA1")
    /// `kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA224` ("algid:sign:RSA:message-PKCS1v15:SHA224").
    public static let rsaSignatureMessagePKCS1v15SHA224 = SecKeyAlgorithm(
        text: "algid:sign:RSA:message-PKCS1v15:SHA224")
    /// `kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA256` ("algid:sign:RSA:message-PKCS1v15:SHA256").
    public static let rsaSignatureMessagePKCS1v15SHA256 = SecKeyAlgorithm(
        text: "algid:sign:RSA:message-PKCS1v15:SHA256")
    /// `kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA384` ("algid:sign:RSA:message-PKCS1v15:SHA384").
    public static let rsaSignatureMessagePKCS1v15SHA384 = SecKeyAlgorithm(
        text: "algid:sign:RSA:message-PKCS1v15:SHA384")
    /// `kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA512` ("algid:sign:RSA:message-PKCS1v15:SHA512").
    public static let rsaSignatureMessagePKCS1v15SHA512 = SecKeyAlgorithm(
        text: "algid:sign:RSA:message-PKCS1v15:SHA512")
    /// `kSecKeyAlgorithmRSASignatureMessagePSSSHA1` ("algid:sign:RSA:message-PSS:SHA1:SHA1:20").
    public static let rsaSignatureMessagePSSSHA1 = SecKeyAlgorithm(text: "algid:sign:RSA:message-PSS:SHA1:SHA1:20")
    /// `kSecKeyAlgorithmRSASignatureMessagePSSSHA224` ("algid:sign:RSA:message-PSS:SHA224:SHA224:24").
    public static let rsaSignatureMessagePSSSHA224 = SecKeyAlgorithm(
        text: "algid:sign:RSA:message-PSS:SHA224:SHA224:24")
    /// `kSecKeyAlgorithmRSASignatureMessagePSSSHA256` ("algid:sign:RSA:message-PSS:SHA256:SHA256:32").
    public static let rsaSignatureMessagePSSSHA256 = SecKeyAlgorithm(
        text: "algid:sign:RSA:message-PSS:SHA256:SHA256:32")
    /// `kSecKeyAlgorithmRSASignatureMessagePSSSHA384` ("algid:sign:RSA:message-PSS:SHA384:SHA384:48").
    public static let rsaSignatureMessagePSSSHA384 = SecKeyAlgorithm(
        text: "algid:sign:RSA:message-PSS:SHA384:SHA384:48")
    /// `kSecKeyAlgorithmRSASignatureMessagePSSSHA512` ("algid:sign:RSA:message-PSS:SHA512:SHA512:64").
    public static let rsaSignatureMessagePSSSHA512 = SecKeyAlgorithm(
        text: "algid:sign:RSA:message-PSS:SHA512:SHA512:64")
    /// `kSecKeyAlgorithmECDSASignatureRFC4754` ("algid:sign:ECDSA:RFC4754").
    public static let ecdsaSignatureRFC4754 = SecKeyAlgorithm(text: "algid:sign:ECDSA:RFC4754")
    /// `kSecKeyAlgorithmECDSASignatureDigestX962` ("algid:sign:ECDSA:digest-X962").
    public static let ecdsaSignatureDigestX962 = SecKeyAlgorithm(text: "algid:sign:ECDSA:digest-X962")
    /// `kSecKeyAlgorithmECDSASignatureDigestX962SHA1` ("algid:sign:ECDSA:digest-X962:SHA1").
    public static let ecdsaSignatureDigestX962SHA1 = SecKeyAlgorithm(text: "algid:sign:ECDSA:digest-X962:SHA1")
    /// `kSecKeyAlgorithmECDSASignatureDigestX962SHA224` ("algid:sign:ECDSA:digest-X962:SHA224").
    public static let ecdsaSignatureDigestX962SHA224 = SecKeyAlgorithm(text: "algid:sign:ECDSA:digest-X962:SHA224")
    /// `kSecKeyAlgorithmECDSASignatureDigestX962SHA256` ("algid:sign:ECDSA:digest-X962:SHA256").
    public static let ecdsaSignatureDigestX962SHA256 = SecKeyAlgorithm(text: "algid:sign:ECDSA:digest-X962:SHA256")
    /// `kSecKeyAlgorithmECDSASignatureDigestX962SHA384` ("algid:sign:ECDSA:digest-X962:SHA384").
    public static let ecdsaSignatureDigestX962SHA384 = SecKeyAlgorithm(text: "algid:sign:ECDSA:digest-X962:SHA384")
    /// `kSecKeyAlgorithmECDSASignatureDigestX962SHA512` ("algid:sign:ECDSA:digest-X962:SHA512").
    public static let ecdsaSignatureDigestX962SHA512 = SecKeyAlgorithm(text: "algid:sign:ECDSA:digest-X962:SHA512")
    /// `kSecKeyAlgorithmECDSASignatureMessageX962SHA1` ("algid:sign:ECDSA:message-X962:SHA1").
    public static let ecdsaSignatureMessageX962SHA1 = SecKeyAlgorithm(text: "algid:sign:ECDSA:message-X962:SHA1")
    /// `kSecKeyAlgorithmECDSASignatureMessageX962SHA224` ("algid:sign:ECDSA:message-X962:SHA224").
    public static let ecdsaSignatureMessageX962SHA224 = SecKeyAlgorithm(text: "algid:sign:ECDSA:message-X962:SHA224")
    /// `kSecKeyAlgorithmECDSASignatureMessageX962SHA256` ("algid:sign:ECDSA:message-X962:SHA256").
    public static let ecdsaSignatureMessageX962SHA256 = SecKeyAlgorithm(text: "algid:sign:ECDSA:message-X962:SHA256")
    /// `kSecKeyAlgorithmECDSASignatureMessageX962SHA384` ("algid:sign:ECDSA:message-X962:SHA384").
    public static let ecdsaSignatureMessageX962SHA384 = SecKeyAlgorithm(text: "algid:sign:ECDSA:message-X962:SHA384")
    /// `kSecKeyAlgorithmECDSASignatureMessageX962SHA512` ("algid:sign:ECDSA:message-X962:SHA512").
    public static let ecdsaSignatureMessageX962SHA512 = SecKeyAlgorithm(text: "algid:sign:ECDSA:message-X962:SHA512")
    /// `kSecKeyAlgorithmRSAEncryptionRaw` ("algid:encrypt:RSA:raw").
    public static let rsaEncryptionRaw = SecKeyAlgorithm(text: "algid:encrypt:RSA:raw")
    /// `kSecKeyAlgorithmRSAEncryptionPKCS1` ("algid:encrypt:RSA:PKCS1").
    public static let rsaEncryptionPKCS1 = SecKeyAlgorithm(text: "algid:encrypt:RSA:PKCS1")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA1` ("algid:encrypt:RSA:OAEP:SHA1").
    public static let rsaEncryptionOAEPSHA1 = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA1")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA224` ("algid:encrypt:RSA:OAEP:SHA224").
    public static let rsaEncryptionOAEPSHA224 = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA224")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA256` ("algid:encrypt:RSA:OAEP:SHA256").
    public static let rsaEncryptionOAEPSHA256 = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA256")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA384` ("algid:encrypt:RSA:OAEP:SHA384").
    public static let rsaEncryptionOAEPSHA384 = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA384")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA512` ("algid:encrypt:RSA:OAEP:SHA512").
    public static let rsaEncryptionOAEPSHA512 = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA512")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA1AESGCM` ("algid:encrypt:RSA:OAEP:SHA1:AESGCM").
    public static let rsaEncryptionOAEPSHA1AESGCM = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA1:AESGCM")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA224AESGCM` ("algid:encrypt:RSA:OAEP:SHA224:AESGCM").
    public static let rsaEncryptionOAEPSHA224AESGCM = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA224:AESGCM")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA256AESGCM` ("algid:encrypt:RSA:OAEP:SHA256:AESGCM").
    public static let rsaEncryptionOAEPSHA256AESGCM = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA256:AESGCM")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA384AESGCM` ("algid:encrypt:RSA:OAEP:SHA384:AESGCM").
    public static let rsaEncryptionOAEPSHA384AESGCM = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA384:AESGCM")
    /// `kSecKeyAlgorithmRSAEncryptionOAEPSHA512AESGCM` ("algid:encrypt:RSA:OAEP:SHA512:AESGCM").
    public static let rsaEncryptionOAEPSHA512AESGCM = SecKeyAlgorithm(text: "algid:encrypt:RSA:OAEP:SHA512:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionStandardX963SHA1AESGCM` ("algid:encrypt:ECIES:ECDH:KDFX963:SHA1:AESGCM").
    public static let eciesEncryptionStandardX963SHA1AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDH:KDFX963:SHA1:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionStandardX963SHA224AESGCM` ("algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM").
    public static let eciesEncryptionStandardX963SHA224AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionStandardX963SHA256AESGCM` ("algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM").
    public static let eciesEncryptionStandardX963SHA256AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionStandardX963SHA384AESGCM` ("algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM").
    public static let eciesEncryptionStandardX963SHA384AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionStandardX963SHA512AESGCM` ("algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM").
    public static let eciesEncryptionStandardX963SHA512AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionCofactorX963SHA1AESGCM` ("algid:encrypt:ECIES:ECDHC:KDFX963:SHA1:AESGCM").
    public static let eciesEncryptionCofactorX963SHA1AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA1:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionCofactorX963SHA224AESGCM` ("algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM").
    public static let eciesEncryptionCofactorX963SHA224AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionCofactorX963SHA256AESGCM` ("algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM").
    public static let eciesEncryptionCofactorX963SHA256AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionCofactorX963SHA384AESGCM` ("algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM").
    public static let eciesEncryptionCofactorX963SHA384AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionCofactorX963SHA512AESGCM` ("algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM").
    public static let eciesEncryptionCofactorX963SHA512AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM")
    /// `kSecKeyAlgorithmECIESEncryptionStandardVariableIVX963SHA224AESGCM` ("algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM-KDFIV").
    public static let eciesEncryptionStandardVariableIVX963SHA224AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDH:KDFX963:SHA224:AESGCM-KDFIV")
    /// `kSecKeyAlgorithmECIESEncryptionStandardVariableIVX963SHA256AESGCM` ("algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM-KDFIV").
    public static let eciesEncryptionStandardVariableIVX963SHA256AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM-KDFIV")
    /// `kSecKeyAlgorithmECIESEncryptionStandardVariableIVX963SHA384AESGCM` ("algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM-KDFIV").
    public static let eciesEncryptionStandardVariableIVX963SHA384AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDH:KDFX963:SHA384:AESGCM-KDFIV")
    /// `kSecKeyAlgorithmECIESEncryptionStandardVariableIVX963SHA512AESGCM` ("algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM-KDFIV").
    public static let eciesEncryptionStandardVariableIVX963SHA512AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDH:KDFX963:SHA512:AESGCM-KDFIV")
    /// `kSecKeyAlgorithmECIESEncryptionCofactorVariableIVX963SHA224AESGCM` ("algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM-KDFIV").
    public static let eciesEncryptionCofactorVariableIVX963SHA224AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA224:AESGCM-KDFIV")
    /// `kSecKeyAlgorithmECIESEncryptionCofactorVariableIVX963SHA256AESGCM` ("algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV").
    public static let eciesEncryptionCofactorVariableIVX963SHA256AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")
    /// `kSecKeyAlgorithmECIESEncryptionCofactorVariableIVX963SHA384AESGCM` ("algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM-KDFIV").
    public static let eciesEncryptionCofactorVariableIVX963SHA384AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA384:AESGCM-KDFIV")
    /// `kSecKeyAlgorithmECIESEncryptionCofactorVariableIVX963SHA512AESGCM` ("algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM-KDFIV").
    public static let eciesEncryptionCofactorVariableIVX963SHA512AESGCM = SecKeyAlgorithm(
        text: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA512:AESGCM-KDFIV")
    /// `kSecKeyAlgorithmECDHKeyExchangeStandard` ("algid:keyexchange:ECDH").
    public static let ecdhKeyExchangeStandard = SecKeyAlgorithm(text: "algid:keyexchange:ECDH")
    /// `kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA1` ("algid:keyexchange:ECDH:KDFX963:SHA1").
    public static let ecdhKeyExchangeStandardX963SHA1 = SecKeyAlgorithm(text: "algid:keyexchange:ECDH:KDFX963:SHA1")
    /// `kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA224` ("algid:keyexchange:ECDH:KDFX963:SHA224").
    public static let ecdhKeyExchangeStandardX963SHA224 = SecKeyAlgorithm(text: "algid:keyexchange:ECDH:KDFX963:SHA224")
    /// `kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA256` ("algid:keyexchange:ECDH:KDFX963:SHA256").
    public static let ecdhKeyExchangeStandardX963SHA256 = SecKeyAlgorithm(text: "algid:keyexchange:ECDH:KDFX963:SHA256")
    /// `kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA384` ("algid:keyexchange:ECDH:KDFX963:SHA384").
    public static let ecdhKeyExchangeStandardX963SHA384 = SecKeyAlgorithm(text: "algid:keyexchange:ECDH:KDFX963:SHA384")
    /// `kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA512` ("algid:keyexchange:ECDH:KDFX963:SHA512").
    public static let ecdhKeyExchangeStandardX963SHA512 = SecKeyAlgorithm(text: "algid:keyexchange:ECDH:KDFX963:SHA512")
    /// `kSecKeyAlgorithmECDHKeyExchangeCofactor` ("algid:keyexchange:ECDHC").
    public static let ecdhKeyExchangeCofactor = SecKeyAlgorithm(text: "algid:keyexchange:ECDHC")
    /// `kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA1` ("algid:keyexchange:ECDHC:KDFX963:SHA1").
    public static let ecdhKeyExchangeCofactorX963SHA1 = SecKeyAlgorithm(text: "algid:keyexchange:ECDHC:KDFX963:SHA1")
    /// `kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA224` ("algid:keyexchange:ECDHC:KDFX963:SHA224").
    public static let ecdhKeyExchangeCofactorX963SHA224 = SecKeyAlgorithm(
        text: "algid:keyexchange:ECDHC:KDFX963:SHA224")
    /// `kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA256` ("algid:keyexchange:ECDHC:KDFX963:SHA256").
    public static let ecdhKeyExchangeCofactorX963SHA256 = SecKeyAlgorithm(
        text: "algid:keyexchange:ECDHC:KDFX963:SHA256")
    /// `kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA384` ("algid:keyexchange:ECDHC:KDFX963:SHA384").
    public static let ecdhKeyExchangeCofactorX963SHA384 = SecKeyAlgorithm(
        text: "algid:keyexchange:ECDHC:KDFX963:SHA384")
    /// `kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA512` ("algid:keyexchange:ECDHC:KDFX963:SHA512").
    public static let ecdhKeyExchangeCofactorX963SHA512 = SecKeyAlgorithm(
        text: "algid:keyexchange:ECDHC:KDFX963:SHA512")
}

/// `SecKeyOperationType`: `.sign`, `.verify`, `.encrypt`, `.decrypt`, `.keyExchange`, with Apple's raw values.
public typealias SecKeyOperationType = KeyOperation

/// `kSecPrivateKeyAttrs` ("private"): attributes of the private key in `SecKeyCreateRandomKey`'s parameters.
public var kSecPrivateKeyAttrs: CFString { SecConstant("private") }
/// `kSecPublicKeyAttrs` ("public"): attributes of the public key in `SecKeyCreateRandomKey`'s parameters.
public var kSecPublicKeyAttrs: CFString { SecConstant("public") }
/// `kSecAttrTokenIDSecureEnclave` ("com.apple.setoken").
public var kSecAttrTokenIDSecureEnclave: CFString { SecConstant("com.apple.setoken") }
/// `kSecKeyKeyExchangeParameterRequestedSize` ("requestedSize").
public var kSecKeyKeyExchangeParameterRequestedSize: CFString { SecConstant("requestedSize") }
/// `kSecKeyKeyExchangeParameterSharedInfo` ("sharedInfo").
public var kSecKeyKeyExchangeParameterSharedInfo: CFString { SecConstant("sharedInfo") }
