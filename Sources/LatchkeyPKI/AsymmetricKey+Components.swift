package import FoundationEssentials
package import LatchkeyCrypto

/// Keys from and to their numbers, as other formats carry them (the SSH agent protocol, OpenSSH's key files):
/// an RSA key's modulus and exponents, an EC key's point and scalar. Private numbers travel in `SecureBytes`.
extension AsymmetricKey {
    /// An RSA public key from its modulus and public exponent (big-endian magnitudes).
    package static func rsaPublicKey(modulus: Data, exponent: Data) throws(KeyError) -> AsymmetricKey {
        let der = DER.element(DER.sequence, DER.unsignedInteger(Array(modulus)) + DER.unsignedInteger(Array(exponent)))
        return try AsymmetricKey(externalRepresentation: Data(der), type: .rsa, isPrivate: false)
    }

    /// An RSA key's modulus and public exponent (big-endian, without leading zeros); nil for an EC key.
    package var rsaPublicNumbers: (modulus: Data, exponent: Data)? {
        guard type == .rsa else { return nil }
        let bytes = Array(publicKeyData)
        var outer = DERReader(bytes)
        do throws(DERError) {
            let sequence = try outer.next(tag: DER.sequence, "RSAPublicKey")
            var inner = DERReader(bytes, range: sequence.contents)
            let modulus = try inner.next(tag: DER.integer, "the modulus")
            let exponent = try inner.next(tag: DER.integer, "the exponent")
            func magnitude(_ element: DERElement) -> Data { Data(bytes[element.contents].drop(while: { $0 == 0 })) }
            return (magnitude(modulus), magnitude(exponent))
        } catch {
            return nil  // OpenSSL wrote this DER itself: it always reads back.
        }
    }

    /// An RSA private key from n, e, d, p, q and q⁻¹ mod p (big-endian magnitudes), as an SSH agent is given
    /// it: the CRT exponents are computed, and the whole checked for consistency (the primes' product is the
    /// modulus, the exponents fit).
    package static func rsaPrivateKey(
        modulus: Data, publicExponent: Data, privateExponent: SecureBytes, prime1: SecureBytes,
        prime2: SecureBytes, coefficient: SecureBytes
    ) throws(KeyError) -> AsymmetricKey {
        guard
            let (exponent1, exponent2) = OpenSSL.rsaCRTExponents(
                privateExponent: privateExponent, prime1: prime1, prime2: prime2)
        else {
            throw KeyError(.decode, "the RSA key's primes are not primes")
        }
        let parts: [DERIntegerSource] = [
            .plain([0]), .plain(Array(modulus)), .plain(Array(publicExponent)), .secret(privateExponent),
            .secret(prime1), .secret(prime2), .secret(exponent1), .secret(exponent2), .secret(coefficient),
        ]
        let contentLength = parts.reduce(0) { $0 + $1.encodedLength }
        let header = [DER.sequence] + DER.lengthOctets(contentLength)
        let der = SecureBytes(count: header.count + contentLength, lifetime: .transient) { buffer in
            var offset = 0
            for byte in header {
                buffer[offset] = byte
                offset += 1
            }
            for part in parts { part.write(into: buffer, at: &offset) }
        }
        guard let handle = OpenSSL.importRSAPrivate(der) else {
            throw KeyError(.decode, "the numbers are not a consistent RSA private key")
        }
        return try AsymmetricKey(handle: handle, type: .rsa, isPrivate: true)
    }

    /// An EC private key from its X9.63 point and its scalar, checked (the point is the scalar's).
    package static func ecPrivateKey(point: Data, scalar: SecureBytes) throws(KeyError) -> AsymmetricKey {
        let sizes: [Int: Int] = [32: 256, 48: 384, 66: 521]
        guard point.first == 0x04, let bits = sizes[(point.count - 1) / 2], point.count == 1 + 2 * ((bits + 7) / 8),
            scalar.count <= (bits + 7) / 8, let group = curves[bits]
        else { throw KeyError(.decode, "the EC key is not one of P-256, P-384 or P-521 (\(point.count)-byte point)") }
        guard let handle = OpenSSL.importEC(group: group, point: point, scalar: scalar) else {
            throw KeyError(.decode, "the EC private key's point is not its scalar's")
        }
        return try AsymmetricKey(handle: handle, type: .ellipticCurve, isPrivate: true)
    }

    /// An Ed25519 private key from OpenSSH's 64 bytes — the 32-byte seed, then the public key — checked: the
    /// seed's public key must be both the one that follows it and `publicKey`.
    package static func ed25519PrivateKey(seedAndPublicKey secret: SecureBytes, publicKey: Data) throws(KeyError)
        -> AsymmetricKey
    {
        guard secret.count == 64, publicKey.count == 32 else {
            throw KeyError(.decode, "an Ed25519 key is a 32-byte seed and a 32-byte public key")
        }
        let seed = secret.withUnsafeBytes { raw in SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[0..<32])) }
        let trailing = secret.withUnsafeBytes { raw in Data(raw[32..<64]) }
        guard let handle = OpenSSL.importEd25519Private(seed) else {
            throw KeyError(.decode, "the Ed25519 seed is not a key")
        }
        let key = try AsymmetricKey(handle: handle, type: .ed25519, isPrivate: true)
        guard key.publicKeyData == publicKey, key.publicKeyData == trailing else {
            throw KeyError(.decode, "the Ed25519 private key is not its public key's")
        }
        return key
    }

    /// An Ed25519 key's seed followed by its public key (OpenSSH's form of the private key); nil for a public key.
    package var ed25519SeedAndPublicKey: SecureBytes? {
        guard type == .ed25519, let seed = OpenSSL.ed25519Seed(handle) else { return nil }
        return SecureBytes(count: 64, lifetime: .transient) { buffer in
            seed.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<32]).copyMemory(from: $0) }
            publicKeyData.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: buffer[32..<64]).copyMemory(from: $0)
            }
        }
    }
}

/// One INTEGER of a DER structure being written into a zeroizing buffer: public bytes, or secret ones.
private enum DERIntegerSource {
    case plain([UInt8])
    case secret(SecureBytes)

    /// The magnitude's bytes without leading zeros (at least one byte), and whether a 0 goes in front.
    private func shape() -> (skip: Int, count: Int, pad: Bool) {
        func measure(_ bytes: UnsafeRawBufferPointer) -> (Int, Int, Bool) {
            var skip = 0
            while skip < bytes.count - 1 && bytes[skip] == 0 { skip += 1 }
            if bytes.isEmpty { return (0, 0, true) }
            return (skip, bytes.count - skip, bytes[skip] & 0x80 != 0)
        }
        switch self {
        case .plain(let bytes): return bytes.withUnsafeBytes(measure)
        case .secret(let bytes): return bytes.withUnsafeBytes(measure)
        }
    }

    var encodedLength: Int {
        let (_, count, pad) = shape()
        let contents = count + (pad ? 1 : 0)
        return 1 + DER.lengthOctets(contents).count + contents
    }

    func write(into buffer: UnsafeMutableRawBufferPointer, at offset: inout Int) {
        let (skip, count, pad) = shape()
        for byte in [DER.integer] + DER.lengthOctets(count + (pad ? 1 : 0)) + (pad ? [0] : []) {
            buffer[offset] = byte
            offset += 1
        }
        let copy = { (bytes: UnsafeRawBufferPointer) in
            for index in 0..<count { buffer[offset + index] = bytes[skip + index] }
        }
        switch self {
        case .plain(let bytes): bytes.withUnsafeBytes(copy)
        case .secret(let bytes): bytes.withUnsafeBytes(copy)
        }
        offset += count
    }
}

extension DER {
    /// An INTEGER of a non-negative magnitude (big-endian): leading zeros dropped, one put back when the top
    /// bit is set, and a zero for an empty magnitude.
    static func unsignedInteger(_ magnitude: [UInt8]) -> [UInt8] {
        var trimmed = Array(magnitude.drop(while: { $0 == 0 }))
        if trimmed.isEmpty || trimmed[0] & 0x80 != 0 { trimmed.insert(0, at: 0) }
        return element(DER.integer, trimmed)
    }
}
