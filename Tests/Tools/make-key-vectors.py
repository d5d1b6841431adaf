#!/usr/bin/env python3
"""Makes Tests/Fixtures/keys/vectors.json with Python's `cryptography`, an implementation independent of
Latchkey's: ECIES and RSA-OAEP-AES-GCM ciphertexts in the byte layout Apple's SecKey produces (read from
Apple's SecKeyAdaptors.m), X9.63 key agreements, and signatures — each with the private key in Apple's
external representation, so the tests decrypt, derive and verify what this other implementation made.

Run from the repository root: python3 Tests/Tools/make-key-vectors.py Tests/Fixtures/keys/vectors.json
"""
import json
import os
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.x963kdf import X963KDF

HASHES = {"SHA1": hashes.SHA1, "SHA224": hashes.SHA224, "SHA256": hashes.SHA256, "SHA384": hashes.SHA384,
          "SHA512": hashes.SHA512}
CURVES = {256: ec.SECP256R1, 384: ec.SECP384R1, 521: ec.SECP521R1}


def point(public):
    return public.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def ec_external(private):
    size = (private.curve.key_size + 7) // 8
    return point(private.public_key()) + private.private_numbers().private_value.to_bytes(size, "big")


def rsa_external(private):
    return private.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.TraditionalOpenSSL,
                                 serialization.NoEncryption())


def x963(hash_name, secret, shared_info, length):
    return X963KDF(algorithm=HASHES[hash_name](), length=length, sharedinfo=shared_info).derive(secret)


def ecies(bits, hash_name, variable_iv, plaintext, shared_info=b"", aad=None, key_bits=None):
    recipient = ec.generate_private_key(CURVES[bits]())
    ephemeral = ec.generate_private_key(CURVES[bits]())
    ephemeral_point = point(ephemeral.public_key())
    secret = ephemeral.exchange(ec.ECDH(), recipient.public_key())
    key_length = (key_bits // 8) if key_bits else (32 if bits > 256 else 16)
    derived = x963(hash_name, secret, ephemeral_point + shared_info, key_length + (16 if variable_iv else 0))
    key, iv = derived[:key_length], (derived[key_length:] if variable_iv else bytes(16))
    sealed = AESGCM(key).encrypt(iv, plaintext, aad)
    algorithm = "algid:encrypt:ECIES:ECDHC:KDFX963:%s:%s" % (hash_name, "AESGCM-KDFIV" if variable_iv else "AESGCM")
    return {"kind": "ecies", "algorithm": algorithm, "keyType": "73", "privateKey": ec_external(recipient).hex(),
            "plaintext": plaintext.hex(), "sharedInfo": shared_info.hex(), "aad": (aad or b"").hex(),
            "symmetricKeySizeInBits": key_bits or 0, "ciphertext": (ephemeral_point + sealed).hex()}


def rsa_aes_gcm(bits, hash_name, plaintext):
    recipient = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    session = os.urandom(32 if bits >= 4096 else 16)
    wrapped = recipient.public_key().encrypt(session, padding.OAEP(mgf=padding.MGF1(HASHES[hash_name]()),
                                                                   algorithm=HASHES[hash_name](), label=None))
    public_der = recipient.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)
    sealed = AESGCM(session).encrypt(bytes(16), plaintext, public_der)
    return {"kind": "decrypt", "algorithm": "algid:encrypt:RSA:OAEP:%s:AESGCM" % hash_name, "keyType": "42",
            "privateKey": rsa_external(recipient).hex(), "plaintext": plaintext.hex(), "ciphertext": (wrapped + sealed).hex()}


def exchange(bits, hash_name, size, shared_info):
    mine = ec.generate_private_key(CURVES[bits]())
    peer = ec.generate_private_key(CURVES[bits]())
    secret = mine.exchange(ec.ECDH(), peer.public_key())
    result = x963(hash_name, secret, shared_info, size) if hash_name else secret
    algorithm = "algid:keyexchange:ECDH" + (":KDFX963:" + hash_name if hash_name else "")
    return {"kind": "exchange", "algorithm": algorithm, "keyType": "73", "privateKey": ec_external(mine).hex(),
            "peer": point(peer.public_key()).hex(), "requestedSize": size, "sharedInfo": shared_info.hex(),
            "result": result.hex()}


def signature(kind, bits, algorithm, message):
    if kind == "ec":
        private = ec.generate_private_key(CURVES[bits]())
        hash_name = algorithm.rsplit(":", 1)[1]
        sig = private.sign(message, ec.ECDSA(HASHES[hash_name]()))
        external, key_type = ec_external(private), "73"
    else:
        private = rsa.generate_private_key(public_exponent=65537, key_size=bits)
        hash_name = algorithm.split(":")[4]
        if "PSS" in algorithm:
            pad = padding.PSS(mgf=padding.MGF1(HASHES[hash_name]()), salt_length=HASHES[hash_name]().digest_size)
        else:
            pad = padding.PKCS1v15()
        sig = private.sign(message, pad, HASHES[hash_name]())
        external, key_type = rsa_external(private), "42"
    return {"kind": "verify", "algorithm": algorithm, "keyType": key_type, "privateKey": external.hex(),
            "message": message.hex(), "signature": sig.hex()}


vectors = [
    ecies(256, "SHA256", True, b"a secret for the server"),
    ecies(256, "SHA256", False, b"fixed IV variant"),
    ecies(256, "SHA256", True, b"with shared info and AAD", shared_info=b"context", aad=b"header"),
    ecies(384, "SHA384", True, b"P-384 uses AES-256"),
    ecies(521, "SHA512", True, b"P-521"),
    ecies(256, "SHA224", True, b"AES-256 on P-256 when asked", key_bits=256),
    ecies(256, "SHA256", True, b""),
    rsa_aes_gcm(2048, "SHA256", b"RSA wraps an AES-128 key"),
    exchange(256, None, 0, b""),
    exchange(256, "SHA256", 32, b"shared info"),
    exchange(384, "SHA384", 100, b""),
    signature("ec", 256, "algid:sign:ECDSA:message-X962:SHA256", b"signed by Python"),
    signature("ec", 521, "algid:sign:ECDSA:message-X962:SHA512", b"P-521"),
    signature("rsa", 2048, "algid:sign:RSA:message-PKCS1v15:SHA256", b"PKCS #1 v1.5"),
    signature("rsa", 2048, "algid:sign:RSA:message-PSS:SHA384:SHA384:48", b"PSS"),
]
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
with open(sys.argv[1], "w") as handle:
    json.dump(vectors, handle, indent=1)
    handle.write("\n")
print("wrote", len(vectors), "vectors to", sys.argv[1])
