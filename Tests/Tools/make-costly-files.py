#!/usr/bin/env python3
"""Writes files whose password-based key derivations ask for far more work than anyone needs — the second
review's crafted imports (issue 30, point 5) — without running any derivation: the ASN.1 is written by
hand, and only a PKCS #12 MAC of one iteration is computed (RFC 7292, appendix B).

Usage: make-costly-files.py DIRECTORY PASSWORD
  mac.p12           the MAC asks for 2^31-1 iterations (its digest is not checked first)
  encrypted.p12     a right MAC (1 iteration); the encrypted safe asks for PBKDF2 with 2^31-1 iterations
  shrouded.p12      a right MAC (1 iteration); the key bag asks for PKCS #12 PBE with 2^31-1 iterations
  pbkdf2-key.pem    an ENCRYPTED PRIVATE KEY asking for PBKDF2 with 2^31-1 iterations
  scrypt-key.pem    an ENCRYPTED PRIVATE KEY asking for scrypt N=2^20, r=8, p=64
"""
import base64
import hashlib
import hmac
import os
import sys

directory, password = sys.argv[1], sys.argv[2]
MAXIMUM = 2**31 - 1


def tlv(tag, body):
    length = len(body)
    if length < 0x80:
        encoded = bytes([length])
    else:
        octets = length.to_bytes((length.bit_length() + 7) // 8, "big")
        encoded = bytes([0x80 | len(octets)]) + octets
    return bytes([tag]) + encoded + body


def sequence(*parts):
    return tlv(0x30, b"".join(parts))


def integer(value):
    octets = value.to_bytes(value.bit_length() // 8 + 1, "big")
    return tlv(0x02, octets)


def octets(data):
    return tlv(0x04, data)


def oid(dotted):
    numbers = [int(part) for part in dotted.split(".")]
    body = bytes([numbers[0] * 40 + numbers[1]])
    for number in numbers[2:]:
        chunk = [number & 0x7F]
        number >>= 7
        while number:
            chunk.insert(0, 0x80 | (number & 0x7F))
            number >>= 7
        body += bytes(chunk)
    return tlv(0x06, body)


def explicit(number, body):
    return tlv(0xA0 | number, body)


NULL = b"\x05\x00"
DATA, ENCRYPTED_DATA = "1.2.840.113549.1.7.1", "1.2.840.113549.1.7.6"
SALT = bytes(range(8))


def pbes2_pbkdf2(iterations):
    kdf = sequence(oid("1.2.840.113549.1.5.12"), sequence(octets(SALT), integer(iterations),
                                                        sequence(oid("1.2.840.113549.2.9"), NULL)))
    cipher = sequence(oid("2.16.840.1.101.3.4.1.42"), octets(bytes(16)))
    return sequence(oid("1.2.840.113549.1.5.13"), sequence(kdf, cipher))


def pbes2_scrypt(n, r, p):
    kdf = sequence(oid("1.3.6.1.4.1.11591.4.11"), sequence(octets(SALT), integer(n), integer(r), integer(p)))
    cipher = sequence(oid("2.16.840.1.101.3.4.1.42"), octets(bytes(16)))
    return sequence(oid("1.2.840.113549.1.5.13"), sequence(kdf, cipher))


def pkcs12_pbe(iterations):  # pbeWithSHAAnd3-KeyTripleDES-CBC
    return sequence(oid("1.2.840.113549.1.12.1.3"), sequence(octets(SALT), integer(iterations)))


def pkcs12_key(secret, salt, identifier, iterations, length):
    """RFC 7292, B.2, with SHA-1 (u = 20, v = 64), for one block of output."""
    v = 64
    d = bytes([identifier]) * v
    s = (salt * ((v + len(salt) - 1) // len(salt)))[:v]
    pw = (secret * ((v + len(secret) - 1) // len(secret)))[:v]
    block = hashlib.sha1(d + s + pw).digest()
    for _ in range(iterations - 1):
        block = hashlib.sha1(block).digest()
    return block[:length]


def pfx(authenticated_safe, mac_iterations, right_mac):
    content = sequence(*authenticated_safe)
    secret = password.encode("utf-16-be") + b"\x00\x00"
    digest = bytes(20)
    if right_mac:
        key = pkcs12_key(secret, SALT, 3, mac_iterations, 20)
        digest = hmac.new(key, content, hashlib.sha1).digest()
    mac = sequence(sequence(sequence(oid("1.3.14.3.2.26"), NULL), octets(digest)), octets(SALT), integer(mac_iterations))
    return sequence(integer(3), sequence(oid(DATA), explicit(0, octets(content))), mac)


def data_safe(bags):
    return sequence(oid(DATA), explicit(0, octets(sequence(*bags))))


def encrypted_safe(algorithm):
    encrypted = sequence(integer(0), sequence(oid(DATA), algorithm, tlv(0x80, bytes(32))))
    return sequence(oid(ENCRYPTED_DATA), explicit(0, encrypted))


shrouded_bag = sequence(oid("1.2.840.113549.1.12.10.1.2"), explicit(0, sequence(pkcs12_pbe(MAXIMUM), octets(bytes(64)))))


def write(name, data):
    with open(os.path.join(directory, name), "wb") as out:
        out.write(data)


def pem(der):
    lines = base64.encodebytes(der).decode().replace("\n", "")
    body = "\n".join(lines[index:index + 64] for index in range(0, len(lines), 64))
    return f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{body}\n-----END ENCRYPTED PRIVATE KEY-----\n".encode()


write("mac.p12", pfx([data_safe([])], MAXIMUM, right_mac=False))
write("encrypted.p12", pfx([encrypted_safe(pbes2_pbkdf2(MAXIMUM))], 1, right_mac=True))
write("shrouded.p12", pfx([data_safe([shrouded_bag])], 1, right_mac=True))
write("pbkdf2-key.pem", pem(sequence(pbes2_pbkdf2(MAXIMUM), octets(bytes(48)))))
write("scrypt-key.pem", pem(sequence(pbes2_scrypt(2**20, 8, 64), octets(bytes(48)))))
