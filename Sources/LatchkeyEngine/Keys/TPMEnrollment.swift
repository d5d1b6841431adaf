import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyPOSIX
internal import LatchkeyTPM

/// What a TPM-enrolled keychain keeps in its `tpm-enrollment` meta row.
///
/// The keybag's wrapping key is derived from the Argon2id output *and* a 32-byte secret the TPM seals under an
/// authValue that is itself derived from the Argon2id output (`latchkey/v1/tpm-auth`). The sealed object is
/// subject to the TPM's dictionary-attack lockout, so every passphrase guess is a TPM operation the TPM counts,
/// and the file holds nothing that checks a guess offline: the key-check value is computed from the entangled
/// key. The device key is sealed too, `noDA` (it needs no passphrase, so a power cut never counts against
/// the user), with an empty authValue.
///
/// Layout: `"LKT1"`, the pinned storage key's name, the passphrase object's public and private areas, then a
/// flag byte (bit 0: a device-key object follows) and the device object's public and private areas — each
/// field a 4-byte little-endian length and its bytes; with flag bit 1, the unattended unlock follows: the PCR
/// mask (4 bytes, little-endian; bit n is PCR n of the SHA-256 bank) and its object's public and private areas;
/// with flag bit 2 (only with bit 1), the unattended unlock is sealed under a signed policy: the policy key's
/// X9.63 point (a field), a 4-byte count and the signed policies the keychain holds (`TPMSignedPolicy`).
struct TPMEnrollment: Equatable {
    /// The TPM name of the storage primary the objects were sealed under (which TPM this is).
    var primaryName: Data
    /// The secret the keybag's key needs, sealed under the passphrase-derived authValue (DA-protected).
    var passphraseObject: TPMSealedObject
    /// The device key sealed noDA, when the device key moved into the TPM.
    var deviceObject: TPMSealedObject?
    /// The unattended unlock, when enrolled with `--unattended`: a key sealed to PCR values.
    var unattended: TPMUnattended?

    private static let magic = Data("LKT1".utf8)

    /// What a malformed `tpm-enrollment` row reads as: the keychain is enrolled, but only the recovery code
    /// opens it.
    static let malformed = TPMEnrollment(
        primaryName: Data(), passphraseObject: TPMSealedObject(public: Data(), private: Data()))

    func encoded() -> Data {
        var writer = ByteWriter(capacity: 512)
        writer.appendRaw(Self.magic)
        writer.appendField(primaryName)
        writer.appendField(passphraseObject.public)
        writer.appendField(passphraseObject.private)
        writer.append(
            UInt8((deviceObject == nil ? 0 : 1) | (unattended == nil ? 0 : 2) | (unattended?.policyKey == nil ? 0 : 4)))
        if let deviceObject {
            writer.appendField(deviceObject.public)
            writer.appendField(deviceObject.private)
        }
        if let unattended {
            writer.append(unattended.pcrMask)
            writer.appendField(unattended.object.public)
            writer.appendField(unattended.object.private)
            if let key = unattended.policyKey {
                writer.appendField(key.point)
                writer.append(UInt32(unattended.signedPolicies.count))
                for policy in unattended.signedPolicies { policy.append(to: &writer) }
            }
        }
        return writer.data
    }

    static func decode(_ data: Data) -> TPMEnrollment? {
        data.withUnsafeBytes { buffer -> TPMEnrollment? in
            var reader = ByteReader(buffer)
            do {
                guard try reader.readRaw(4) == magic else { return nil }
                let name = try reader.readField()
                let object = TPMSealedObject(public: try reader.readField(), private: try reader.readField())
                let flags = try reader.readByte()
                var device: TPMSealedObject?
                if flags & 1 != 0 {
                    device = TPMSealedObject(public: try reader.readField(), private: try reader.readField())
                }
                var unattended: TPMUnattended?
                if flags & 2 != 0 {
                    let mask = try reader.readUInt32()
                    unattended = TPMUnattended(
                        pcrMask: mask,
                        object: TPMSealedObject(public: try reader.readField(), private: try reader.readField()))
                }
                if flags & 4 != 0 {
                    guard unattended != nil, let key = TPMPolicyKey(point: try reader.readField()) else { return nil }
                    unattended?.policyKey = key
                    let count = try reader.readUInt32()
                    guard count <= TPMUnattended.maximumPolicies else { return nil }
                    for _ in 0..<count { unattended?.signedPolicies.append(try TPMSignedPolicy.read(from: &reader)) }
                }
                guard reader.isAtEnd, flags & ~7 == 0 else { return nil }
                return TPMEnrollment(
                    primaryName: name, passphraseObject: object, deviceObject: device, unattended: unattended)
            } catch {
                return nil  // A short record: the caller reports a damaged enrollment.
            }
        }
    }

    /// The TPM authorization for the passphrase object, from the Argon2id output.
    static func authValue(root: SecureBytes) -> SecureBytes {
        KeyedDigest.subkey(of: root, label: "latchkey/v1/tpm-auth")
    }

    /// The root the master key comes from once the TPM has released its secret.
    static func entangledRoot(root: SecureBytes, secret: SecureBytes) -> SecureBytes {
        KeyedDigest.secureDigest(of: secret, key: KeyedDigest.subkey(of: root, label: "latchkey/v1/tpm-entangle"))
    }
}

/// An unattended unlock: a random key that wraps a copy of the keybag (`unattended-keybag`), sealed by the TPM
/// (noDA, no authValue) under a policy that only the PCR values at enrollment satisfy (`TPM2_PolicyPCR`) — or,
/// with a policy key, under `TPM2_PolicyAuthorize` by that key: any PCR values it signs a policy for.
struct TPMUnattended: Equatable {
    /// The SHA-256 PCRs the policy covers (bit n: PCR n).
    var pcrMask: UInt32
    /// The sealed key.
    var object: TPMSealedObject
    /// The key whose signed policies open it (nil: sealed to the PCR values at enrollment).
    var policyKey: TPMPolicyKey?
    /// The signed policies given to the keychain (`latchkey tpm add-policy`), oldest first.
    var signedPolicies: [TPMSignedPolicy] = []

    /// The signed policies kept at most: adding one more drops the oldest.
    static let maximumPolicies: UInt32 = 16

    /// The PCR numbers, ascending.
    var pcrs: [Int] { (0..<24).filter { pcrMask & (1 << UInt32($0)) != 0 } }
}

/// Where the TPM is: `LATCHKEY_TPM_TCTI` (a tpm2-tss TCTI string such as `swtpm:host=127.0.0.1,port=2321`),
/// else the kernel's resource manager `device:/dev/tpmrm0`.
package enum TPMAddress {
    /// The environment variable that names the TPM.
    package static let environmentVariable = "LATCHKEY_TPM_TCTI"
    /// Where Linux's kernel resource manager serves the TPM.
    package static let defaultAddress = "device:/dev/tpmrm0"

    /// The TPM the operations of this task use instead of the environment's: tests and the bench, which talk
    /// to several software TPMs from one process, set it around what they run (`$scoped.withValue`).
    @TaskLocal package static var scoped: String?

    /// The TPM this process uses (this task's `scoped` one, when set).
    package static var current: String {
        if let scoped { return scoped }
        let value = CurrentProcess.environment[environmentVariable] ?? ""
        return value.isEmpty ? defaultAddress : value
    }
}

/// A recovery code: 160 random bits as 32 base-32 letters and digits in eight groups of four, which opens a
/// TPM-enrolled keychain without its TPM. Not `CustomStringConvertible` with its content.
package struct RecoveryCode: Sendable, CustomStringConvertible {
    let bytes: SecureBytes

    private static let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789".utf8)  // no l, o, 0, 1

    init(random: Void = ()) { bytes = SecureBytes(randomCount: 20) }

    init(bytes: SecureBytes) { self.bytes = bytes }

    /// Parses a typed code: case, spaces and dashes are ignored; nil when it is not 40 letters of the alphabet.
    package init?(_ text: String) {
        var values: [UInt8] = []
        for character in text.utf8 {
            if character == UInt8(ascii: "-") || character == UInt8(ascii: " ") || character == UInt8(ascii: "\n") {
                continue
            }
            let lowered = character >= 65 && character <= 90 ? character + 32 : character
            guard let index = Self.alphabet.firstIndex(of: lowered) else { return nil }
            values.append(UInt8(index))
        }
        guard values.count == 32 else { return nil }
        var out = [UInt8](repeating: 0, count: 20)
        for (index, value) in values.enumerated() {
            for bit in 0..<5 where value & (16 >> bit) != 0 {
                let position = index * 5 + bit
                out[position / 8] |= 0x80 >> UInt8(position % 8)
            }
        }
        bytes = SecureBytes(copying: out)
        out.withUnsafeMutableBytes { wipeBytes($0) }
    }

    /// The code to show once: `xxxxx-xxxxx-…` (32 characters in 8 groups of 4).
    package var text: String {
        bytes.withUnsafeBytes { raw in
            var characters: [Character] = []
            for index in 0..<32 {
                var value: UInt8 = 0
                for bit in 0..<5 {
                    let position = index * 5 + bit
                    if raw[position / 8] & (0x80 >> UInt8(position % 8)) != 0 { value |= 16 >> bit }
                }
                if index > 0, index % 4 == 0 { characters.append("-") }
                characters.append(Character(UnicodeScalar(Self.alphabet[Int(value)])))
            }
            return String(characters)
        }
    }

    /// The key that wraps the recovery keybag (the code carries 160 bits: no slow derivation is needed).
    var wrapKey: SecureBytes { KeyedDigest.subkey(of: bytes, label: "latchkey/v1/recovery-wrap") }

    /// `RecoveryCode(redacted)`.
    package var description: String { "RecoveryCode(redacted)" }
}
