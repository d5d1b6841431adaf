public import Foundation
public import Latchkey

/// `SecKey`: an EC (P-256, P-384, P-521) or RSA key, public or private, on OpenSSL — in this process, or
/// a private key the keychain holds (made by `SecKeyCreateRandomKey` with `kSecAttrTokenID` or
/// `kSecAttrIsExtractable` false), which signs, decrypts and derives where it is held and is never exported.
/// Make one with `SecKeyCreateRandomKey` or `SecKeyCreateWithData`, store it with `SecItemAdd`
/// (`kSecValueRef`), get it back with `kSecReturnRef`, and use it with Apple's algorithms. Keys with the
/// same type, half and public key compare equal (held keys: the same item, too).
///
/// ```swift
/// var error: Unmanaged<CFError>?
/// let key = SecKeyCreateRandomKey([kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 256] as CFDictionary, &error)!
/// let signature = SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, Data("hello".utf8) as CFData, &error)
/// ```
public final class SecKey: NSObject, KeyConvertible, @unchecked Sendable {
    // @unchecked: immutable (one `KeyReference`, itself Sendable).
    /// The key: in this process, or held by the keychain.
    public let keyReference: KeyReference

    /// Wraps a key in this process.
    public init(_ key: AsymmetricKey) {
        self.keyReference = .inProcess(key)
        super.init()
    }

    /// Wraps a key the keychain holds.
    public init(held: HeldKey) {
        self.keyReference = .held(held)
        super.init()
    }

    /// The key when it is in this process; nil for a key the keychain holds.
    public var asymmetricKey: AsymmetricKey? {
        if case .inProcess(let key) = keyReference { key } else { nil }
    }

    /// The public key (the key itself when public), which is always in this process.
    var publicHalf: AsymmetricKey {
        switch keyReference {
        case .inProcess(let key): key.publicKey
        case .held(let held): held.publicKey
        }
    }

    /// Same key (see the type's summary).
    public override func isEqual(_ object: Any?) -> Bool { (object as? SecKey)?.keyReference == keyReference }

    /// Consistent with `isEqual`.
    public override var hash: Int { keyReference.hashValue }

    /// `<SecKey EC private key, 256 bits>`, `<SecKey EC private key, 256 bits, held by com.apple.setoken>`:
    /// never key material.
    public override var description: String {
        switch keyReference {
        case .inProcess(let key): "<SecKey \(key.description)>"
        case .held(let held): "<SecKey \(held.description)>"
        }
    }
}

/// Sets Apple's out-parameter error (`NSOSStatusErrorDomain`, the status as code, the message as its
/// description: `SecurityError`) and returns nil.
func failing<T>(_ error: UnsafeMutablePointer<Unmanaged<CFError>?>?, _ status: OSStatus, _ message: String) -> T? {
    error?.pointee = Unmanaged.passRetained(SecurityError(status, message))
    return nil
}

private func failing<T>(_ error: UnsafeMutablePointer<Unmanaged<CFError>?>?, _ failure: KeyError) -> T? {
    failing(error, failure.kind.rawValue, failure.reason)
}

private func failing<T>(_ error: UnsafeMutablePointer<Unmanaged<CFError>?>?, _ failure: KeychainError) -> T? {
    failing(error, failure.status.rawValue, failure.detail ?? failure.message)
}

/// Runs an operation that needs the private key where the key is — in this process, or where the keychain
/// holds it — and gives its result or Apple's out-parameter error.
private func privateOperation(
    _ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?,
    _ inProcess: (AsymmetricKey) throws(KeyError) -> Data,
    held: (HeldKey) throws(KeychainError) -> Data
) -> CFData? {
    switch key.keyReference {
    case .inProcess(let asymmetric):
        do {
            return NSData(data: try inProcess(asymmetric))
        } catch let failure {
            return failing(error, failure)
        }
    case .held(let heldKey):
        do {
            return NSData(data: try held(heldKey))
        } catch let failure {
            return failing(error, failure)
        }
    }
}

/// The Swift dictionary of a `CFDictionary` (string keys only).
private func entries(_ dictionary: CFDictionary?) -> [String: Any] {
    var result: [String: Any] = [:]
    for (key, value) in dictionary ?? [:] { if let name = key as? String { result[name] = value } }
    return result
}

/// A key type from `kSecAttrKeyType` ("73"/"42", as text or number).
private func keyType(_ value: Any?) -> KeyType? {
    // Apple's two types only: Ed25519 (Latchkey's own, for SSH keys) is no kSecAttrKeyType.
    if let text = value as? String { return KeyType(rawValue: text).flatMap { $0 == .ed25519 ? nil : $0 } }
    if let number = value as? NSNumber, !(value is Bool) { return KeyType(rawValue: number.stringValue) }
    return nil
}

/// An integer from a number or its text (`kSecAttrKeySizeInBits` is given both ways).
private func integer(_ value: Any?) -> Int? {
    if let number = value as? NSNumber { return number.intValue }
    if let text = value as? String { return Int(text) }
    return nil
}

/// `SecKeyCreateRandomKey`: a new private key of `kSecAttrKeyType` (`kSecAttrKeyTypeECSECPrimeRandom` with
/// 256, 384 or 521 bits; `kSecAttrKeyTypeRSA` with 512 to 8192, a multiple of 8 — another size is
/// `errSecKeySizeNotAllowed`, as SecRSAKey.c answers) and `kSecAttrKeySizeInBits`. As on Apple's
/// platforms, `kSecPrivateKeyAttrs` and `kSecPublicKeyAttrs` are merged over the top-level attributes and
/// each half is stored in the keychain when its merged `kSecAttrIsPermanent` is true (default false), with
/// its attributes (`kSecAttrApplicationTag`, `kSecAttrLabel`, …).
///
/// With `kSecAttrTokenID` (`kSecAttrTokenIDSecureEnclave`) or a private `kSecAttrIsExtractable` false, the
/// private key is made and kept where the keychain runs — inside `latchkeyd` when the agent serves it — and
/// never leaves it: the key returned signs, decrypts and derives there. Its accessibility is `…ThisDeviceOnly`
/// (the default: `kSecAttrAccessibleWhenUnlockedThisDeviceOnly`). Without `kSecAttrIsPermanent` it is
/// ephemeral, as a Secure Enclave key can be: kept in memory where it was made, for this program, until the
/// keychain locks or that process ends — never stored, and gone for good then.
public func SecKeyCreateRandomKey(_ parameters: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?)
    -> SecKey?
{
    let given = entries(parameters)
    guard let type = keyType(given[kSecAttrKeyType as String]) else {
        return failing(
            error, errSecParam, "kSecAttrKeyType must be kSecAttrKeyTypeECSECPrimeRandom or kSecAttrKeyTypeRSA")
    }
    guard let bits = integer(given[kSecAttrKeySizeInBits as String]) else {
        return failing(error, errSecParam, "kSecAttrKeySizeInBits is missing")
    }
    func merged(_ part: String) -> [String: Any] {
        var result = given
        if let specific = given[part] as? NSDictionary { result.merge(entries(specific)) { _, own in own } }
        for top in [
            kSecPublicKeyAttrs as String, kSecPrivateKeyAttrs as String, kSecAttrKeyType as String,
            kSecAttrKeySizeInBits as String,
        ] {
            result[top] = nil
        }
        return result
    }
    func isPermanent(_ attributes: [String: Any]) -> Bool {
        DictionaryValue.boolean(attributes[kSecAttrIsPermanent as String] ?? false) == true
    }
    let privateAttributes = merged(kSecPrivateKeyAttrs as String)
    let held =
        privateAttributes[kSecAttrTokenID as String] != nil
        || DictionaryValue.boolean(privateAttributes[kSecAttrIsExtractable as String] ?? true) == false
    let key: SecKey
    if held {
        var attributes = privateAttributes
        attributes[kSecAttrIsPermanent as String] = isPermanent(privateAttributes)  // Stored, or ephemeral.
        do {
            key = SecKey(
                held: try SecItemConfiguration.backend().createHeldKey(type, bits: bits, attributes: attributes))
        } catch let failure {
            return failing(error, failure)
        }
    } else {
        do {
            // SecRSAKey.c generates RSA keys of 512 bits and more (errSecKeySizeNotAllowed outside).
            if type == .rsa, !(512...AsymmetricKey.rsaSizes.upperBound).contains(bits) {
                return failing(error, errSecKeySizeNotAllowed, "Invalid or missing key size: \(bits) bits")
            }
            key = SecKey(try AsymmetricKey.generate(type, bits: bits, minimumRSABits: 512))
        } catch let failure {
            return failing(error, failure)
        }
    }
    let halves: [(attributes: [String: Any], key: SecKey)] =
        held
        ? [(merged(kSecPublicKeyAttrs as String), SecKey(key.publicHalf))]
        : [(merged(kSecPublicKeyAttrs as String), SecKey(key.publicHalf)), (privateAttributes, key)]
    for (partAttributes, half) in halves {
        var attributes = partAttributes
        guard isPermanent(attributes) else { continue }
        attributes[kSecClass as String] = kSecClassKey as String
        attributes[kSecValueRef as String] = half
        attributes[kSecAttrTokenID as String] = nil
        let status = SecItemAdd(attributes as CFDictionary, nil)
        guard status == errSecSuccess else {
            return failing(error, status, SecCopyLastErrorDetail() ?? "the key could not be stored")
        }
    }
    return key
}

/// `SecKeyCreateWithData`: a key from Apple's external representation. As `SecKey.c` reads `attributes`:
/// `kSecAttrKeyType` (RSA, or EC — `kSecAttrKeyTypeEC`, `kSecAttrKeyTypeECSECPrimeRandom` or the older
/// ECDSA value "43" — as a number or its decimal text) and `kSecAttrKeyClass` (public or private) say what
/// the bytes are; `kSecAttrKeySizeInBits` and every other attribute are ignored, whatever they say (the size
/// follows from the key). A symmetric class is `errSecUnimplemented`; another type or class, or bytes that
/// are not such a key, `errSecParam` with Apple's message. An RSA public key must be one corecrypto imports
/// (`RSAPublicKeyImportRule`: non-negative integers, an odd modulus of 3 to 8192 bits, an exponent no wider
/// than the modulus), whatever its size. With `kSecAttrTokenID` Apple makes a
/// CryptoTokenKit token's key, which Linux has none of: `errSecUnimplemented`.
public func SecKeyCreateWithData(
    _ keyData: CFData, _ attributes: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecKey? {
    let given = entries(attributes)
    if let token = given[kSecAttrTokenID as String] {
        return failing(
            error, errSecUnimplemented,
            "there are no CryptoTokenKit tokens on Linux (\(token)); find a key the keychain holds with SecItemCopyMatching"
        )
    }
    let typeValue = given[kSecAttrKeyType as String]
    guard let algorithm = keyParameter(typeValue) else {
        return failing(error, errSecParam, "Unsupported key type: \(describe(typeValue))")
    }
    let classValue = given[kSecAttrKeyClass as String]
    guard let keyClass = keyParameter(classValue) else {
        return failing(error, errSecParam, "Unsupported key class: \(describe(classValue))")
    }
    let isPrivate: Bool
    switch keyClass {
    case 0: isPrivate = false
    case 1: isPrivate = true
    case 2: return failing(error, errSecUnimplemented, "Unsupported symmetric key type: \(describe(typeValue))")
    default: return failing(error, errSecParam, "Unsupported key class: \(describe(classValue))")
    }
    let type: KeyType
    switch algorithm {
    case 42: type = .rsa
    case 43, 73: type = .ellipticCurve
    default:
        return failing(
            error, errSecParam, "Unsupported \(isPrivate ? "private" : "public") key type: \(describe(typeValue))")
    }
    let bytes = Data(referencing: keyData)
    do {
        // An RSA public key is what corecrypto takes (`RSAPublicKeyImportRule`), which OpenSSL does not check.
        if type == .rsa && !isPrivate, let reason = RSAPublicKeyImportRule.refusal(bytes) {
            throw KeyError(.param, reason)
        }
        return SecKey(try AsymmetricKey(externalRepresentation: bytes, type: type, isPrivate: isPrivate))
    } catch _ {
        // Apple's messages, its slip included: an EC private key's failure says "public" too.
        let message =
            type == .rsa
            ? "RSA \(isPrivate ? "private" : "public") key creation from data failed"
            : "EC public key creation from data failed"
        return failing(error, errSecParam, message)
    }
}

/// A key type or class as `SecKeyParamsGetCFIndex` reads it: a number (not a boolean), or text that is
/// exactly a decimal integer; nil for anything else or a negative value.
private func keyParameter(_ value: Any?) -> Int? {
    guard let value, DictionaryValue.boolean(value) == nil else { return nil }
    if let text = value as? String {
        guard let number = Int(text), String(number) == text, number >= 0 else { return nil }
        return number
    }
    guard let number = value as? NSNumber, number.doubleValue == number.doubleValue.rounded(), number.int64Value >= 0,
        let exact = Int(exactly: number.int64Value)
    else { return nil }
    return exact
}

/// A value for an error message (never key material: these are type and class values).
private func describe(_ value: Any?) -> String { value.map { "\($0)" } ?? "(null)" }

/// `SecKeyCopyExternalRepresentation`: EC public `04‖X‖Y`, EC private `04‖X‖Y‖K`, RSA PKCS #1. A key the
/// keychain holds is not exported (`errSecUnimplemented`, as Apple's token keys answer).
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?)
    -> CFData?
{
    guard let asymmetric = key.asymmetricKey else {
        return failing(
            error, errSecUnimplemented,
            "export not implemented for key \(key): the keychain holds it and never hands it out")
    }
    do {
        return NSData(data: try asymmetric.externalRepresentation().copiedData())
    } catch let failure {
        return failing(error, failure)
    }
}

/// `SecKeyCopyPublicKey`: the public half (the key itself when public).
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? { SecKey(key.publicHalf) }

/// `SecKeyCopyAttributes`: as Apple's software keys report them — class, type (`kSecAttrKeyType…`), sizes,
/// application label, the usage flags, and the external representation as `kSecValueData`. A key the
/// keychain holds reports what Apple's token keys do: sensitive, not extractable, its `kSecAttrTokenID`,
/// and no data — and, a Latchkey extension, where it lives (`kSecAttrLatchkeyKeyStorage`: the TPM, or
/// software).
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    var result: [String: Any] = [kSecClass as String: kSecClassKey as String]
    let derived: [AttributeKey: AttributeValue]
    switch key.keyReference {
    case .inProcess(let asymmetric):
        derived = KeyAttributes.derived(from: asymmetric)
        do {
            result[kSecValueData as String] = try asymmetric.externalRepresentation().copiedData()
        } catch {
            return nil  // Apple's contract: nil when the attributes cannot be produced.
        }
    case .held(let held):
        derived = KeyAttributes.derived(from: held.publicKey, held: true)
        result[kSecAttrTokenID as String] = held.tokenID
        result[kSecAttrLatchkeyKeyStorage as String] = held.storage.rawValue
    }
    let half = key.publicHalf
    for (name, value) in derived {
        switch name {
        case .keyClass: result[name.rawValue] = value == .number(1) ? "1" : "0"
        case .type: result[name.rawValue] = half.type.rawValue
        case .keySizeInBits, .effectiveKeySize: result[name.rawValue] = half.sizeInBits
        case .applicationLabel: result[name.rawValue] = half.applicationLabel
        default: if case .number(let flag) = value { result[name.rawValue] = flag != 0 }
        }
    }
    return NSDictionary(dictionary: result)
}

/// `SecKeyIsAlgorithmSupported`.
public func SecKeyIsAlgorithmSupported(_ key: SecKey, _ operation: SecKeyOperationType, _ algorithm: SecKeyAlgorithm)
    -> Bool
{
    switch key.keyReference {
    case .inProcess(let asymmetric): asymmetric.supports(operation, algorithm.keyAlgorithm)
    case .held(let held): held.supports(operation, algorithm.keyAlgorithm)
    }
}

/// `SecKeyGetBlockSize`: the RSA modulus in bytes; for EC, the size of the curve's field in bytes (32 for
/// P-256, 66 for P-521), as `SecECKey.c`'s `ccec_ctx_size` — a DER signature can be longer (up to
/// 8 + 2 × that, `SecKeyGetSize`'s signature size).
public func SecKeyGetBlockSize(_ key: SecKey) -> Int { (key.publicHalf.sizeInBits + 7) / 8 }

/// `SecKeyCreateSignature`: signs the message (or digest, for the digest algorithms) with a private key.
public func SecKeyCreateSignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ dataToSign: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    privateOperation(key, error) { (asymmetric) throws(KeyError) in
        try asymmetric.sign(algorithm.keyAlgorithm, Data(referencing: dataToSign))
    } held: { (held) throws(KeychainError) in
        try held.sign(algorithm.keyAlgorithm, Data(referencing: dataToSign))
    }
}

/// `SecKeyVerifySignature`: true when the signature is right; false with `errSecVerifyFailed` when not.
public func SecKeyVerifySignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ signedData: CFData, _ signature: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> Bool {
    do {
        try (key.asymmetricKey ?? key.publicHalf).verify(
            algorithm.keyAlgorithm, Data(referencing: signedData), signature: Data(referencing: signature))
        return true
    } catch let failure {
        let _: Bool? = failing(error, failure)
        return false
    }
}

/// `SecKeyCreateEncryptedData`: RSA PKCS #1, OAEP and OAEP-AES-GCM; ECIES in Apple's byte layout.
public func SecKeyCreateEncryptedData(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ plaintext: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    do {
        return NSData(
            data: try (key.asymmetricKey ?? key.publicHalf).encrypt(
                algorithm.keyAlgorithm, Data(referencing: plaintext)))
    } catch let failure {
        return failing(error, failure)
    }
}

/// `SecKeyCreateDecryptedData`: with the private key; a ciphertext that does not decrypt is `errSecParam`.
public func SecKeyCreateDecryptedData(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ ciphertext: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    privateOperation(key, error) { (asymmetric) throws(KeyError) in
        try asymmetric.decrypt(algorithm.keyAlgorithm, Data(referencing: ciphertext))
    } held: { (held) throws(KeychainError) in
        try held.decrypt(algorithm.keyAlgorithm, Data(referencing: ciphertext))
    }
}

/// `SecKeyCopyKeyExchangeResult`: ECDH of a private key with a public key; the X9.63 algorithms need
/// `kSecKeyKeyExchangeParameterRequestedSize` and take `kSecKeyKeyExchangeParameterSharedInfo`.
public func SecKeyCopyKeyExchangeResult(
    _ privateKey: SecKey, _ algorithm: SecKeyAlgorithm, _ publicKey: SecKey, _ parameters: CFDictionary,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    let given = entries(parameters)
    var options = KeyOperationParameters()
    options.requestedSize = integer(given[kSecKeyKeyExchangeParameterRequestedSize as String])
    if let info = given[kSecKeyKeyExchangeParameterSharedInfo as String] {
        guard let bytes = info as? Data else {
            return failing(error, errSecParam, "ECDHKeyExchange wrong sharedInfo type (must be CFData/NSData)")
        }
        options.sharedInfo = bytes
    }
    return privateOperation(privateKey, error) { (asymmetric) throws(KeyError) in
        try asymmetric.keyExchange(algorithm.keyAlgorithm, with: publicKey.publicHalf, parameters: options)
    } held: { (held) throws(KeychainError) in
        try held.keyExchange(algorithm.keyAlgorithm, with: publicKey.publicHalf, parameters: options)
    }
}

/// `SecCertificateCopyKey`: the certificate's public key; nil for kinds other than EC and RSA.
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? {
    certificate.certificate.publicKey.map(SecKey.init)
}
