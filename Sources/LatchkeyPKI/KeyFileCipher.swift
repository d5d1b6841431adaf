package import FoundationEssentials
package import LatchkeyCrypto

/// The ciphers of OpenSSH's encrypted key files (`openssh-key-v1`), on OpenSSL: AES in CTR mode (ssh-keygen's
/// default, `aes256-ctr`), CBC mode and GCM (`aes256-gcm@openssh.com`). Only decryption: Latchkey reads key
/// files and never writes one.
package enum KeyFileCipher {
    /// AES-CTR or AES-CBC (no padding) decryption; nil for a key, IV or input of the wrong size.
    package static func aesDecrypt(counterMode: Bool, key: SecureBytes, iv: Data, ciphertext: Data) -> SecureBytes? {
        OpenSSL.aesDecrypt(counterMode: counterMode, key: key, iv: iv, input: ciphertext)
    }

    /// AES-GCM decryption with a 16-byte tag; nil when the tag does not authenticate (a wrong passphrase).
    package static func aesGCMOpen(key: SecureBytes, iv: Data, ciphertext: Data, tag: Data) -> SecureBytes? {
        OpenSSL.aesGCMOpenSecret(key: key, iv: Array(iv), ciphertext: ciphertext, tag: tag)
    }
}
