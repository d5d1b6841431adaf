#!/usr/bin/env python3
"""Makes the certificate fixtures of CertificateTests with Python's `cryptography` (an implementation
independent of Latchkey's), and writes what Apple's keychain derives from each into expected.json.

Run from the repository root: python3 Tests/Tools/make-certificates.py Tests/Fixtures/certificates
The attributes are computed here from cryptography's own view of each certificate: the serial number's
content octets, the SHA-1 of the public key bits, the subject key identifier, and the normalized names
(PrintableString values folded as Apple's createNormalizedX501Name folds them, re-encoded by cryptography).
The summaries and e-mail lists are written out by hand from Apple's rules (SecCertificate.c).
"""
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.name import _ASN1Type
from cryptography.x509.oid import NameOID

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
# Every certificate but expired.der stays valid until 2047 or later (UTCTime ends in 2049), so that no test
# that asks for "valid today" starts failing on a calendar date.
now = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
P = _ASN1Type.PrintableString
U = _ASN1Type.UTF8String


def name(*pairs):
    return x509.Name([x509.NameAttribute(oid, value, _type=kind) for oid, value, kind in pairs])


def fold(value):
    """Apple's PrintableString normalization: a-z upper-cased, blank runs collapsed, trimmed."""
    return re.sub(r"[ \t]+", " ", value).strip(" ").translate(str.maketrans("abcdefghijklmnopqrstuvwxyz",
                                                                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))


def normalized_contents(subject):
    rdns = []
    for rdn in subject.rdns:
        attributes = []
        for attribute in rdn:
            value = fold(attribute.value) if attribute._type == P else attribute.value
            attributes.append(x509.NameAttribute(attribute.oid, value, _type=attribute._type))
        rdns.append(x509.RelativeDistinguishedName(attributes))
    der = x509.Name(rdns).public_bytes()
    return strip_header(der)


def strip_header(der):
    length = der[1]
    if length < 0x80:
        return der[2:]
    return der[2 + (length & 0x7F):]


def serial_contents(number):
    octets = number.to_bytes((number.bit_length() + 7) // 8 or 1, "big")
    return b"\x00" + octets if octets[0] & 0x80 else octets


def key_bits(key):
    public = key.public_key()
    if isinstance(public, ec.EllipticCurvePublicKey):
        return public.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)


def build(subject, issuer, key, signer, serial, days=(-30, 8000), extensions=()):
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(serial).not_valid_before(now + datetime.timedelta(days=days[0]))
               .not_valid_after(now + datetime.timedelta(days=days[1])))
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(signer, hashes.SHA256())


expected = {}


def write(file, certificate, key, summary, common_names, emails):
    der = certificate.public_bytes(serialization.Encoding.DER)
    with open(os.path.join(out, file), "wb") as handle:
        handle.write(der)
    try:
        skid = certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest.hex()
    except x509.ExtensionNotFound:
        skid = None
    expected[file] = {
        "ctyp": certificate.version.value + 1,
        "slnr": serial_contents(certificate.serial_number).hex(),
        "issr": normalized_contents(certificate.issuer).hex(),
        "subj": normalized_contents(certificate.subject).hex(),
        "pkhh": hashlib.sha1(key_bits(key)).hexdigest(),
        "skid": skid,
        "notValidBefore": int(certificate.not_valid_before_utc.timestamp()),
        "notValidAfter": int(certificate.not_valid_after_utc.timestamp()),
        "summary": summary,
        "commonNames": common_names,
        "emails": emails,
    }


root_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
root_name = name((NameOID.COUNTRY_NAME, "US", P), (NameOID.ORGANIZATION_NAME, "Latchkey  test lab ", P),
                 (NameOID.COMMON_NAME, "Latchkey Test Root", U))
root = build(root_name, root_name, root_key, root_key, 1, days=(-365, 8700), extensions=[
    (x509.BasicConstraints(ca=True, path_length=None), True),
    (x509.SubjectKeyIdentifier.from_public_key(root_key.public_key()), False)])
write("root-rsa.der", root, root_key, "Latchkey Test Root", ["Latchkey Test Root"], [])

ca_key = ec.generate_private_key(ec.SECP384R1())
ca_name = name((NameOID.ORGANIZATION_NAME, "Latchkey  test lab ", P),
               (NameOID.ORGANIZATIONAL_UNIT_NAME, "  issuing   authority ", P))
ca = build(ca_name, root_name, ca_key, root_key, 0x0102030405060708090A, days=(-60, 8500), extensions=[
    (x509.BasicConstraints(ca=True, path_length=0), True),
    (x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)])
write("intermediate-ec384.der", ca, ca_key, "  issuing   authority ", [], [])

leaf_key = ec.generate_private_key(ec.SECP256R1())
leaf_name = name((NameOID.COUNTRY_NAME, "us", P), (NameOID.ORGANIZATION_NAME, "Example  widgets", P),
                 (NameOID.COMMON_NAME, "www.example.com", U),
                 (NameOID.EMAIL_ADDRESS, "Webmaster@example.com", _ASN1Type.IA5String))
leaf = build(leaf_name, ca_name, leaf_key, ca_key, 0x8000000000000001, extensions=[
    (x509.SubjectAlternativeName([x509.DNSName("www.example.com"), x509.RFC822Name("ops@example.com")]), False),
    (x509.SubjectKeyIdentifier.from_public_key(leaf_key.public_key()), False)])
write("leaf-ec256.der", leaf, leaf_key, "www.example.com", ["www.example.com"],
      ["ops@example.com", "Webmaster@example.com"])

mail_key = ec.generate_private_key(ec.SECP256R1())
mail_name = name((NameOID.EMAIL_ADDRESS, "alice@example.org", _ASN1Type.IA5String))
mail = build(mail_name, ca_name, mail_key, ca_key, 77)
write("email-only.der", mail, mail_key, "alice@example.org", [], ["alice@example.org"])

pair_key = ec.generate_private_key(ec.SECP256R1())
pair_name = name((NameOID.COMMON_NAME, "first", U), (NameOID.COMMON_NAME, "Zo\u00eb", _ASN1Type.BMPString),
                 (NameOID.ORGANIZATION_NAME, "Example", U), (x509.ObjectIdentifier("2.5.4.13"), "signing", U))
pair = build(pair_name, ca_name, pair_key, ca_key, 78)
write("two-names.der", pair, pair_key, "Zo\u00eb, first (signing)", ["first", "Zo\u00eb"], [])

dns_key = ec.generate_private_key(ec.SECP256R1())
dns = build(x509.Name([]), ca_name, dns_key, ca_key, 79, extensions=[
    (x509.SubjectAlternativeName([x509.DNSName("api.example.net")]), True)])
write("dns-only.der", dns, dns_key, "api.example.net", [], [])

old_key = ec.generate_private_key(ec.SECP256R1())
old = build(name((NameOID.COMMON_NAME, "expired.example.com", U)), ca_name, old_key, ca_key, 80, days=(-730, -365))
write("expired.der", old, old_key, "expired.example.com", ["expired.example.com"], [])

def apple_private(key):
    """Apple's external representation of a private key: 04||X||Y||K for EC, PKCS #1 for RSA."""
    if isinstance(key, ec.EllipticCurvePrivateKey):
        size = (key.curve.key_size + 7) // 8
        return key_bits(key) + key.private_numbers().private_value.to_bytes(size, "big")
    return key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


# The private keys of the leaf and the root, for the identity tests (Apple's external representations).
with open(os.path.join(out, "leaf-ec256.key"), "wb") as handle:
    handle.write(apple_private(leaf_key))
with open(os.path.join(out, "root-rsa.key"), "wb") as handle:
    handle.write(apple_private(root_key))

# PKCS #12 files of the leaf's identity with its chain: today's encryption (AES-256, PBKDF2), Triple DES with
# SHA-1 (older tools), and RC2-40 (made by the openssl command with its legacy provider, as very old tools did).
password = b"fixture p12"
modern = pkcs12.serialize_key_and_certificates(b"leaf", leaf_key, leaf, [ca, root],
                                               serialization.BestAvailableEncryption(password))
with open(os.path.join(out, "leaf-aes.p12"), "wb") as handle:
    handle.write(modern)
triple_des = (serialization.PrivateFormat.PKCS12.encryption_builder()
              .kdf_rounds(2048).key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC)
              .hmac_hash(hashes.SHA1()).build(password))
with open(os.path.join(out, "leaf-3des.p12"), "wb") as handle:
    handle.write(pkcs12.serialize_key_and_certificates(b"leaf", leaf_key, leaf, [ca, root], triple_des))
with tempfile.TemporaryDirectory() as scratch:
    with open(os.path.join(scratch, "key.pem"), "wb") as handle:
        handle.write(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()))
    with open(os.path.join(scratch, "cert.pem"), "wb") as handle:
        handle.write(leaf.public_bytes(serialization.Encoding.PEM))
    subprocess.run(["openssl", "pkcs12", "-export", "-legacy", "-certpbe", "PBE-SHA1-RC2-40", "-keypbe",
                    "PBE-SHA1-3DES", "-in", os.path.join(scratch, "cert.pem"), "-inkey",
                    os.path.join(scratch, "key.pem"), "-name", "leaf", "-passout", "pass:fixture p12", "-out",
                    os.path.join(out, "leaf-rc2.p12")], check=True)

with open(os.path.join(out, "expected.json"), "w") as handle:
    json.dump(expected, handle, indent=1, sort_keys=True, ensure_ascii=False)
    handle.write("\n")
print("wrote", len(expected), "certificates to", out)
