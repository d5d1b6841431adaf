#ifndef LATCHKEY_CTSS2_KEYS_H
#define LATCHKEY_CTSS2_KEYS_H
#include <string.h>
#include <tss2/tss2_esys.h>

// Builders and readers for the keys Latchkey makes inside the TPM (kSecAttrTokenIDSecureEnclave keys).

// An unrestricted ECC NIST P-256 key under the storage primary that both signs and derives (sign|decrypt, no
// scheme of its own: each TPM2_Sign names ECDSA/SHA-256), fixed to this TPM and its parent, generated inside
// it, usable with its (empty) authValue and noDA: it needs no passphrase, so nothing it does counts toward the
// dictionary-attack lockout.
static inline void latchkey_tpm_p256_key_template(TPM2B_PUBLIC *out) {
    memset(out, 0, sizeof *out);
    TPMT_PUBLIC *p = &out->publicArea;
    p->type = TPM2_ALG_ECC;
    p->nameAlg = TPM2_ALG_SHA256;
    p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
        | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_DECRYPT;
    p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
    p->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

// The public point of a key's public area: x and y (each as the TPM gave it, big-endian) and their lengths.
static inline int latchkey_tpm_ecc_public_point(const TPM2B_PUBLIC *public, const uint8_t **x, size_t *xLength,
                                                const uint8_t **y, size_t *yLength) {
    if (public->publicArea.type != TPM2_ALG_ECC) return -1;
    const TPMS_ECC_POINT *point = &public->publicArea.unique.ecc;
    *x = point->x.buffer;
    *xLength = point->x.size;
    *y = point->y.buffer;
    *yLength = point->y.size;
    return 0;
}

// (A digest to sign is built with shim.h's latchkey_tpm_digest.)

// ECDSA with SHA-256 (the digest is 32 bytes), and the empty hash-check ticket an unrestricted key signs with.
static inline void latchkey_tpm_ecdsa_sha256(TPMT_SIG_SCHEME *scheme, TPMT_TK_HASHCHECK *ticket) {
    memset(scheme, 0, sizeof *scheme);
    scheme->scheme = TPM2_ALG_ECDSA;
    scheme->details.ecdsa.hashAlg = TPM2_ALG_SHA256;
    memset(ticket, 0, sizeof *ticket);
    ticket->tag = TPM2_ST_HASHCHECK;
    ticket->hierarchy = TPM2_RH_NULL;
}

// An ECDSA signature's r and s (big-endian, as the TPM gave them); -1 when it is not an ECDSA signature.
static inline int latchkey_tpm_ecdsa_signature_parts(const TPMT_SIGNATURE *signature, const uint8_t **r, size_t *rLength,
                                                     const uint8_t **s, size_t *sLength) {
    if (signature->sigAlg != TPM2_ALG_ECDSA) return -1;
    *r = signature->signature.ecdsa.signatureR.buffer;
    *rLength = signature->signature.ecdsa.signatureR.size;
    *s = signature->signature.ecdsa.signatureS.buffer;
    *sLength = signature->signature.ecdsa.signatureS.size;
    return 0;
}

// A peer's point (x and y, each at most 32 bytes for P-256's 66-byte limit of the structure).
static inline int latchkey_tpm_ecc_point(TPM2B_ECC_POINT *out, const uint8_t *x, size_t xLength, const uint8_t *y,
                                         size_t yLength) {
    memset(out, 0, sizeof *out);
    if (xLength > sizeof out->point.x.buffer || yLength > sizeof out->point.y.buffer) return -1;
    out->point.x.size = (UINT16)xLength;
    memcpy(out->point.x.buffer, x, xLength);
    out->point.y.size = (UINT16)yLength;
    memcpy(out->point.y.buffer, y, yLength);
    return 0;
}

// The x coordinate of a point the TPM returned (ECDH's shared secret).
static inline const uint8_t *latchkey_tpm_ecc_point_x(const TPM2B_ECC_POINT *point, size_t *length) {
    *length = point->point.x.size;
    return point->point.x.buffer;
}

#endif
