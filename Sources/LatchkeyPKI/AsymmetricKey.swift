public import FoundationEssentials
import LatchkeyCrypto
import Synchronization

/// The two key types Apple's keychain generates (`kSecAttrKeyType`), and Ed25519.
public enum KeyType: String, Sendable, Hashable {
    /// `kSecAttrKeyTypeECSECPrimeRandom` ("73"): NIST P-256, P-384 or P-521.
    case ellipticCurve = "73"
    /// `kSecAttrKeyTypeRSA` ("42").
    case rsa = "42"
    /// Ed25519 (RFC 8032), for SSH keys: Latchkey's own type ("ed25519"), as Apple's keychain has none (CryptoKit
    /// keeps Curve25519 keys as generic passwords). The `SecKey` functions do not offer it.
    case ed25519 = "ed25519"

    /// "RSA", "EC" or "Ed25519", for messages.
    public var name: String {
        switch self {
        case .rsa: "RSA"
        case .ellipticCurve: "EC"
        case .ed25519: "Ed25519"
        }
    }
}

/// An EC, RSA or Ed25519 key, public or private, on OpenSSL: Apple's external representations, and the operations of
/// `SecKey` with Apple's algorithms and byte formats.
///
/// ```swift
/// let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
/// let signature = try key.sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256"), Data("hi".utf8))
/// try key.publicKey.verify(KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256"), Data("hi".utf8), signature: signature)
/// ```
public final class AsymmetricKey: Sendable, Hashable, CustomStringConvertible {
    let handle: PKeyHandle
    /// EC or RSA.
    public let type: KeyType
    /// Whether this is a private key.
    public let isPrivate: Bool
    /// The key size in bits (256, 384, 521; 1024 to 8192 for RSA; 256 for Ed25519).
    public let sizeInBits: Int
    /// The public key's external representation: the X9.63 point for EC, PKCS #1 RSAPublicKey for RSA, the
    /// 32 bytes of RFC 8032 for Ed25519.
    public let publicKeyData: Data
    /// A private key's public half, made on first use (loading it checks the point, which costs as much as
    /// a signature) and kept.
    private let publicHalf = Mutex<AsymmetricKey?>(nil)

    init(handle: PKeyHandle, type: KeyType, isPrivate: Bool) throws(KeyError) {
        self.handle = handle
        self.type = type
        self.isPrivate = isPrivate
        sizeInBits = type == .ed25519 ? 256 : OpenSSL.bits(handle)  // OpenSSL counts Ed25519 as 253 bits.
        let encoded: Data? =
            switch type {
            case .rsa: OpenSSL.rsaDER(handle, privateKey: false).map { $0.withUnsafeBytes { Data($0) } }
            case .ellipticCurve: OpenSSL.ecPoint(handle)
            case .ed25519: OpenSSL.ed25519PublicBytes(handle)
            }
        guard let publicData = encoded else { throw KeyError(.decode, "the key's public half cannot be encoded") }
        publicKeyData = publicData
    }

    /// The curves Latchkey offers, by size.
    static let curves: [Int: String] = [256: "P-256", 384: "P-384", 521: "P-521"]

    /// The RSA sizes `generate` accepts.
    public static let rsaSizes: ClosedRange<Int> = 1024...8192

    /// A new random private key: EC of 256, 384 or 521 bits, or RSA of `minimumRSABits` (1024 unless said
    /// otherwise; Apple's `SecKeyCreateRandomKey` makes them from 512) to 8192 bits, a multiple of 8, or
    /// Ed25519 (256 bits).
    public static func generate(_ type: KeyType, bits: Int, minimumRSABits: Int = rsaSizes.lowerBound) throws(KeyError)
        -> AsymmetricKey
    {
        let handle: PKeyHandle?
        switch type {
        case .ellipticCurve:
            guard let group = curves[bits] else {
                throw KeyError(.param, "an EC key is 256, 384 or 521 bits, not \(bits)")
            }
            handle = OpenSSL.generateEC(group: group)
        case .rsa:
            guard (minimumRSABits...rsaSizes.upperBound).contains(bits), bits % 8 == 0 else {
                throw KeyError(
                    .param,
                    "an RSA key is \(minimumRSABits) to \(rsaSizes.upperBound) bits, a multiple of 8, not \(bits)")
            }
            handle = OpenSSL.generateRSA(bits: bits)
        case .ed25519:
            guard bits == 256 else { throw KeyError(.param, "an Ed25519 key is 256 bits, not \(bits)") }
            handle = OpenSSL.generateEd25519()
        }
        guard let handle else { throw KeyError(.param, "OpenSSL could not generate the key") }
        return try AsymmetricKey(handle: handle, type: type, isPrivate: true)
    }

    /// A key from Apple's external representation (`SecKeyCreateWithData`): EC public `04‖X‖Y`, EC private
    /// `04‖X‖Y‖K` (the curve follows from the length); RSA public PKCS #1 RSAPublicKey (or a
    /// SubjectPublicKeyInfo), RSA private PKCS #1 RSAPrivateKey; Ed25519 public: its 32 bytes, private: its
    /// 32-byte seed.
    public convenience init(externalRepresentation data: Data, type: KeyType, isPrivate: Bool) throws(KeyError) {
        try self.init(externalRepresentation: data, type: type, isPrivate: isPrivate, checked: true)
    }

    /// A private key whose external representation the keychain itself stored and authenticated (a key it
    /// holds): loaded without OpenSSL's consistency checks, which cost a scalar multiplication for EC and
    /// a primality test for RSA on every use.
    package convenience init(storedPrivateKey data: Data, type: KeyType) throws(KeyError) {
        try self.init(externalRepresentation: data, type: type, isPrivate: true, checked: false)
    }

    private convenience init(externalRepresentation data: Data, type: KeyType, isPrivate: Bool, checked: Bool)
        throws(KeyError)
    {
        let handle: PKeyHandle?
        switch type {
        case .ellipticCurve:
            let sizes: [Int: Int] = [32: 256, 48: 384, 66: 521]
            let coordinate = isPrivate ? (data.count - 1) / 3 : (data.count - 1) / 2
            guard data.first == 0x04, let bits = sizes[coordinate], let group = Self.curves[bits],
                data.count == 1 + coordinate * (isPrivate ? 3 : 2)
            else {
                throw KeyError(
                    .decode,
                    "EC \(isPrivate ? "private" : "public") key data must be \(isPrivate ? "04‖X‖Y‖K" : "04‖X‖Y") for P-256, P-384 or P-521 (\(data.count) bytes given)"
                )
            }
            let point = data.prefix(1 + 2 * coordinate)
            let scalar = isPrivate ? Self.secureCopy(data.suffix(coordinate), transient: !checked) : nil
            handle = OpenSSL.importEC(group: group, point: Data(point), scalar: scalar, checked: checked)
        case .rsa:
            handle =
                isPrivate
                ? OpenSSL.importRSAPrivate(Self.secureCopy(data, transient: !checked), checked: checked)
                : OpenSSL.importRSAPublic(data)
        case .ed25519:
            guard data.count == 32 else {
                throw KeyError(
                    .decode,
                    "Ed25519 \(isPrivate ? "private" : "public") key data must be 32 bytes (\(data.count) bytes given)")
            }
            handle =
                isPrivate
                ? OpenSSL.importEd25519Private(Self.secureCopy(data, transient: !checked))
                : OpenSSL.importEd25519Public(data)
        }
        guard let handle, (type == .rsa) == OpenSSL.isRSA(handle), (type == .ed25519) == OpenSSL.isEd25519(handle),
            OpenSSL.hasPrivate(handle) == isPrivate
        else {
            throw KeyError(.decode, "the data is not a valid \(type.name) \(isPrivate ? "private" : "public") key")
        }
        try self.init(handle: handle, type: type, isPrivate: isPrivate)
    }

    /// Key bytes in a zeroizing buffer; `transient` ones (a stored key loaded for one operation) are not
    /// `mlock`ed — locking and unlocking cost four system calls that change the memory map, more than the
    /// operation's own work, and the buffer is gone long before the kernel could swap it out.
    private static func secureCopy(_ bytes: Data, transient: Bool) -> SecureBytes {
        SecureBytes(count: bytes.count, lifetime: transient ? .transient : .longLived) { buffer in
            _ = bytes.copyBytes(to: buffer.bindMemory(to: UInt8.self))
        }
    }

    /// Apple's external representation (`SecKeyCopyExternalRepresentation`), in a zeroizing buffer.
    public func externalRepresentation() throws(KeyError) -> SecureKeyBytes {
        guard isPrivate else { return SecureKeyBytes(SecureBytes(copying: [UInt8](publicKeyData))) }
        switch type {
        case .rsa:
            guard let der = OpenSSL.rsaDER(handle, privateKey: true) else {
                throw KeyError(.param, "the private key cannot be encoded")
            }
            return SecureKeyBytes(der)
        case .ed25519:
            guard let seed = OpenSSL.ed25519Seed(handle) else {
                throw KeyError(.param, "the private key cannot be encoded")
            }
            return SecureKeyBytes(seed)
        case .ellipticCurve:
            let coordinate = (publicKeyData.count - 1) / 2
            guard let scalar = OpenSSL.ecScalar(handle, length: coordinate) else {
                throw KeyError(.param, "the private key cannot be encoded")
            }
            let whole = SecureBytes(count: publicKeyData.count + coordinate) { buffer in
                _ = publicKeyData.copyBytes(to: buffer.bindMemory(to: UInt8.self))
                scalar.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: buffer[publicKeyData.count...]).copyMemory(from: $0)
                }
            }
            return SecureKeyBytes(whole)
        }
    }

    /// The public half (itself when public).
    public var publicKey: AsymmetricKey {
        guard isPrivate else { return self }
        return publicHalf.withLock { cached in
            if let cached { return cached }
            do {
                let made = try AsymmetricKey(externalRepresentation: publicKeyData, type: type, isPrivate: false)
                cached = made
                return made
            } catch {
                preconditionFailure("a key's own public half does not load: \(error)")  // OpenSSL made these bytes.
            }
        }
    }

    /// SHA-1 of the public key data: `kSecAttrApplicationLabel`, equal to a matching certificate's
    /// `kSecAttrPublicKeyHash`.
    public var applicationLabel: Data { OpenSSL.sha1(publicKeyData) }

    /// `SecKeyGetBlockSize`: the modulus size in bytes for RSA, the signature size bound for EC (as Apple).
    public var blockSize: Int { type == .rsa ? (sizeInBits + 7) / 8 : OpenSSL.maximumOutput(handle) }

    /// "EC private key, 256 bits" and the like; never key material.
    public var description: String {
        "\(type.name) \(isPrivate ? "private" : "public") key, \(sizeInBits) bits"
    }

    /// Same type, same half, same public key.
    public static func == (lhs: AsymmetricKey, rhs: AsymmetricKey) -> Bool {
        lhs.type == rhs.type && lhs.isPrivate == rhs.isPrivate && lhs.publicKeyData == rhs.publicKeyData
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(isPrivate)
        hasher.combine(publicKeyData)
    }
}

/// Key material handed out of Latchkey (a private key's external representation): wiped when released.
public final class SecureKeyBytes: Sendable {
    let bytes: SecureBytes

    init(_ bytes: SecureBytes) { self.bytes = bytes }

    /// The number of bytes.
    public var count: Int { bytes.count }

    /// Lends the bytes to `body`; do not let them escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { buffer in try body(buffer) }
    }

    /// A copy in a `Data` (for Apple's `CFData` results): the caller owns it and its lifetime.
    public func copiedData() -> Data { bytes.withUnsafeBytes { Data($0) } }
}
