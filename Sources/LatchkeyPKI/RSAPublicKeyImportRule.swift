package import FoundationEssentials

/// What Apple accepts as an RSA public key from bytes — `SecKeyCreateWithData`'s RSA public branch
/// (`SecKeyCreateRSAPublicKey` with `kSecKeyEncodingBytes`, SecKey.m) reaches `SecRSAPublicKeyInit`
/// (SecRSAKey.c), which hands the bytes to corecrypto: `ccrsa_import_pub_n` must find a modulus of at most
/// `kMaximumRSAKeyBits` (8192), and `ccrsa_import_pub` must then decode the key into that many words and
/// set up arithmetic modulo its modulus. Read from corecrypto's sources (`ccder_decode_rsa_pub`,
/// `ccder_decode_rsa_pub_x509`, `ccder_blob_decode_uint`, `cczp_init`), that is:
///
/// - the bytes are a PKCS #1 `RSAPublicKey` or a SubjectPublicKeyInfo holding one (`ccrsa_import_pub` tries
///   the second first); each of the modulus and the exponent is a DER INTEGER that is not negative;
/// - the modulus is not zero and has at most 8192 significant bits, counted in 64-bit words
///   (`ccn_nof_size`): at most 128 words;
/// - the exponent fits in as many 64-bit words as the modulus takes (`ccder_decode_uint` into the key's
///   `n` words);
/// - the modulus is odd and at least 3: `cczp_init` refuses any other ("Odd moduli >= 3 supported only",
///   corecrypto since 2021; Montgomery arithmetic needs an odd modulus).
///
/// Nothing else: no minimum size (the 512-bit floor is `SecRSAPrivateKeyInit`'s and key generation's), no
/// primality or exponent test. OpenSSL, which Latchkey decodes the key with, checks none of this — it
/// reads a negative INTEGER as its magnitude and takes a modulus of any size or parity — so
/// `LatchkeySecurity` applies this rule before it.
package enum RSAPublicKeyImportRule {
    /// The largest modulus Apple imports, in 64-bit words: `ccn_nof(kMaximumRSAKeyBits)` (8192 bits).
    static let maximumModulusWords = 8192 / 64

    /// Why Apple would refuse `der` as an RSA public key, or nil when it would take it.
    package static func refusal(_ der: Data) -> String? {
        let bytes = Array(der)
        do throws(DERError) {
            let (modulus, exponent) = try integers(bytes)
            return refusal(modulus: modulus, exponent: exponent)
        } catch {
            return "not a PKCS #1 RSAPublicKey or a SubjectPublicKeyInfo holding one: \(error.reason)"
        }
    }

    /// The contents of the modulus and exponent INTEGERs: of a PKCS #1 `RSAPublicKey`, or of the one a
    /// SubjectPublicKeyInfo's BIT STRING holds.
    private static func integers(_ bytes: [UInt8]) throws(DERError) -> ([UInt8], [UInt8]) {
        var outer = DERReader(bytes)
        let sequence = try outer.next(tag: DER.sequence, "the key")
        var inner = DERReader(bytes, range: sequence.contents)
        let first = try inner.next()
        var key = sequence
        if first.tag == DER.sequence {
            // SubjectPublicKeyInfo: the algorithm, then a BIT STRING whose first octet (unused bits) is 0.
            let bitString = try inner.next(tag: 0x03, "the subjectPublicKey")
            guard !bitString.contents.isEmpty, bytes[bitString.contentStart] == 0 else {
                throw DERError(reason: "the subjectPublicKey has unused bits")
            }
            var wrapped = DERReader(bytes, range: (bitString.contentStart + 1)..<bitString.end)
            key = try wrapped.next(tag: DER.sequence, "the RSAPublicKey")
        }
        var numbers = DERReader(bytes, range: key.contents)
        let modulus = try numbers.next(tag: DER.integer, "the modulus")
        let exponent = try numbers.next(tag: DER.integer, "the exponent")
        return (Array(bytes[modulus.contents]), Array(bytes[exponent.contents]))
    }

    /// The rule on the two INTEGERs' contents octets (big-endian two's complement).
    static func refusal(modulus: [UInt8], exponent: [UInt8]) -> String? {
        guard let modulusMagnitude = magnitude(modulus) else { return "the modulus is negative or empty" }
        guard let exponentMagnitude = magnitude(exponent) else { return "the exponent is negative or empty" }
        let modulusWords = words(modulusMagnitude.count)
        guard modulusWords > 0 else { return "the modulus is zero" }
        guard modulusWords <= maximumModulusWords else { return "the modulus has more than 8192 bits" }
        guard words(exponentMagnitude.count) <= modulusWords else {
            return "the exponent takes more 64-bit words than the modulus"
        }
        guard let last = modulusMagnitude.last, last & 1 == 1 else { return "the modulus is even" }
        guard modulusMagnitude != [1] else { return "the modulus is less than 3" }
        return nil
    }

    /// The magnitude of a non-negative INTEGER without its leading zero octets; nil for a negative or empty
    /// one.
    private static func magnitude(_ contents: [UInt8]) -> [UInt8]? {
        guard let first = contents.first, first & 0x80 == 0 else { return nil }
        return Array(contents.drop(while: { $0 == 0 }))
    }

    /// The 64-bit words that `octets` significant octets take (`ccn_nof_size`).
    private static func words(_ octets: Int) -> Int { (octets + 7) / 8 }
}
