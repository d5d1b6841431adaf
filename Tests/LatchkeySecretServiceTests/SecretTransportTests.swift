import Foundation
import LatchkeyCrypto
import LatchkeyPKI
import LatchkeyTestSupport
import Testing

@testable import LatchkeySecretService

/// The Secret Service's DH session, checked against an independent implementation: Python's own modular
/// exponentiation and the `cryptography` package's HKDF and AES-CBC play the client.
@Suite struct SecretTransportTests {
    /// Runs the client side in Python: `args` after the script; its standard output, trimmed.
    func client(_ script: String, _ arguments: [String]) throws -> [String] {
        let output = try HelperProcess.run("/usr/bin/python3", ["-c", script] + arguments)
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout.split(separator: "\n").map(String.init)
    }

    static let prelude = """
        import sys
        from cryptography.hazmat.primitives import hashes, padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF
        p = int("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
                "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
                "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF", 16)
        x = int(sys.argv[1], 16)

        """

    func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    @Test func aClientOfAnotherImplementationSharesTheKey() throws {
        let clientExponent = "5d1c2a" + String(repeating: "37", count: 60)
        let clientPublic = try client(Self.prelude + "print(pow(2, x, p).to_bytes(128, 'big').hex())", [clientExponent])
        let transport = try SecretTransport(peerPublicKey: Data(hexadecimal: try #require(clientPublic.first)))
        #expect(transport.publicKey.count == 128)
        let (iv, ciphertext) = try transport.encrypt(Data("hunter2 for the client".utf8))
        #expect(iv.count == 16 && ciphertext.count == 32)

        let answer = try client(
            Self.prelude + """
                server = int(sys.argv[2], 16)
                shared = pow(server, x, p).to_bytes(128, 'big')
                key = HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"").derive(shared)
                decryptor = Cipher(algorithms.AES(key), modes.CBC(bytes.fromhex(sys.argv[3]))).decryptor()
                unpadder = padding.PKCS7(128).unpadder()
                plain = unpadder.update(decryptor.update(bytes.fromhex(sys.argv[4])) + decryptor.finalize()) + unpadder.finalize()
                print(plain.decode())
                iv = bytes(range(16))
                padder = padding.PKCS7(128).padder()
                encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
                print(iv.hex())
                print((encryptor.update(padder.update(b"stored by the client") + padder.finalize()) + encryptor.finalize()).hex())
                """, [clientExponent, hex(transport.publicKey), hex(iv), hex(ciphertext)])
        #expect(answer.first == "hunter2 for the client")
        let back = try transport.decrypt(iv: Data(hexadecimal: answer[1]), ciphertext: Data(hexadecimal: answer[2]))
        #expect(back == Data("stored by the client".utf8))
    }

    @Test func badPublicValuesAndCiphertextsAreRefused() throws {
        let prime = SecretTransport.prime
        var minusOne = prime
        minusOne[minusOne.count - 1] -= 1
        for bad in [Data(), Data([0]), Data([1]), minusOne, prime, Data(repeating: 0xff, count: 129)] {
            #expect(throws: KeyError(.param, "the client's Diffie-Hellman public value is not an element of the group"))
            {
                _ = try SecretTransport(peerPublicKey: bad)
            }
        }
        let transport = try SecretTransport(peerPublicKey: Data([5]))
        let (iv, ciphertext) = try transport.encrypt(Data("x".utf8))
        let refusal = KeyError(
            .param, "the secret does not decrypt with this session (its IV, length or padding is wrong)")
        #expect(throws: refusal) { _ = try transport.decrypt(iv: Data(iv.prefix(8)), ciphertext: ciphertext) }
        #expect(throws: refusal) { _ = try transport.decrypt(iv: iv, ciphertext: Data(ciphertext.prefix(15))) }
        #expect(throws: refusal) { _ = try transport.decrypt(iv: iv, ciphertext: Data()) }
        // Another session's key: the padding check fails (or, rarely, garbage comes out — never the secret).
        let other = try SecretTransport(peerPublicKey: Data([5]))
        #expect((try? other.decrypt(iv: iv, ciphertext: ciphertext)) != Data("x".utf8))
        #expect(try transport.decrypt(iv: iv, ciphertext: ciphertext) == Data("x".utf8))
    }
}
