#ifndef LATCHKEY_CTSS2_SHIM_H
#define LATCHKEY_CTSS2_SHIM_H
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include "loader.h"

// Builders for the TPM structures Latchkey sends: C unions and fixed arrays read awkwardly from Swift.

// The storage primary: ECC P-256 (RSA generation takes seconds in a TPM), AES-128-CFB for its children,
// noDA (it needs no passphrase), derived from the owner seed, so the same TPM always makes the same key.
static inline void latchkey_tpm_primary_template(TPM2B_PUBLIC *out) {
    memset(out, 0, sizeof *out);
    TPMT_PUBLIC *p = &out->publicArea;
    p->type = TPM2_ALG_ECC;
    p->nameAlg = TPM2_ALG_SHA256;
    p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
        | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
    p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    p->parameters.eccDetail.symmetric.keyBits.aes = 128;
    p->parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    p->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

// A sealed data object: a keyed-hash object with no scheme holding `data`. `noDA` for objects that need
// no passphrase; `policy` (a SHA-256 digest, or NULL) makes the object usable only through that policy.
static inline int latchkey_tpm_seal_template(TPM2B_PUBLIC *out, int noDA, const uint8_t *policy, size_t policyLength) {
    memset(out, 0, sizeof *out);
    TPMT_PUBLIC *p = &out->publicArea;
    p->type = TPM2_ALG_KEYEDHASH;
    p->nameAlg = TPM2_ALG_SHA256;
    p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | (noDA ? TPMA_OBJECT_NODA : 0);
    if (policy) {
        if (policyLength > sizeof p->authPolicy.buffer) return -1;
        p->authPolicy.size = (UINT16)policyLength;
        memcpy(p->authPolicy.buffer, policy, policyLength);
    } else {
        p->objectAttributes |= TPMA_OBJECT_USERWITHAUTH;
    }
    p->parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
    return 0;
}

// The sensitive part of a new object: its authValue and (for a sealed object) its data.
static inline int latchkey_tpm_sensitive(TPM2B_SENSITIVE_CREATE *out, const uint8_t *auth, size_t authLength,
                                         const uint8_t *data, size_t dataLength) {
    memset(out, 0, sizeof *out);
    if (authLength > sizeof out->sensitive.userAuth.buffer || dataLength > sizeof out->sensitive.data.buffer) return -1;
    out->sensitive.userAuth.size = (UINT16)authLength;
    if (authLength) memcpy(out->sensitive.userAuth.buffer, auth, authLength);
    out->sensitive.data.size = (UINT16)dataLength;
    if (dataLength) memcpy(out->sensitive.data.buffer, data, dataLength);
    return 0;
}

static inline int latchkey_tpm_auth(TPM2B_AUTH *out, const uint8_t *bytes, size_t length) {
    memset(out, 0, sizeof *out);
    if (length > sizeof out->buffer) return -1;
    out->size = (UINT16)length;
    if (length) memcpy(out->buffer, bytes, length);
    return 0;
}

// Parameter encryption for sessions: AES-128 in CFB mode.
static inline TPMT_SYM_DEF latchkey_tpm_session_symmetric(void) {
    TPMT_SYM_DEF sym;
    memset(&sym, 0, sizeof sym);
    sym.algorithm = TPM2_ALG_AES;
    sym.keyBits.aes = 128;
    sym.mode.aes = TPM2_ALG_CFB;
    return sym;
}

// A selection of SHA-256 PCRs by bit mask (bit n: PCR n), 0 to 23.
static inline void latchkey_tpm_pcr_selection(TPML_PCR_SELECTION *out, uint32_t mask) {
    memset(out, 0, sizeof *out);
    out->count = 1;
    out->pcrSelections[0].hash = TPM2_ALG_SHA256;
    out->pcrSelections[0].sizeofSelect = 3;
    out->pcrSelections[0].pcrSelect[0] = mask & 0xff;
    out->pcrSelections[0].pcrSelect[1] = (mask >> 8) & 0xff;
    out->pcrSelections[0].pcrSelect[2] = (mask >> 16) & 0xff;
}

// One TPM property's value from a TPM2_GetCapability(TPM2_CAP_TPM_PROPERTIES) answer; 0 when absent.
static inline int latchkey_tpm_property(const TPMS_CAPABILITY_DATA *data, TPM2_PT property, UINT32 *value) {
    if (data->capability != TPM2_CAP_TPM_PROPERTIES) return 0;
    for (UINT32 i = 0; i < data->data.tpmProperties.count; i++) {
        if (data->data.tpmProperties.tpmProperty[i].property == property) {
            *value = data->data.tpmProperties.tpmProperty[i].value;
            return 1;
        }
    }
    return 0;
}

// The handles of a TPM2_GetCapability(TPM2_CAP_HANDLES) answer.
static inline UINT32 latchkey_tpm_handle_count(const TPMS_CAPABILITY_DATA *data) {
    return data->capability == TPM2_CAP_HANDLES ? data->data.handles.count : 0;
}
static inline TPM2_HANDLE latchkey_tpm_handle(const TPMS_CAPABILITY_DATA *data, UINT32 index) {
    return data->data.handles.handle[index];
}

// The descriptors a TCTI polls (its sockets or device), at most `capacity`, into `fds`; how many, or -1 when
// the TCTI does not say (Tss2_Tcti_GetPollHandles is a macro, which Swift cannot call).
static inline int latchkey_tpm_descriptors(TSS2_TCTI_CONTEXT *tcti, int *fds, size_t capacity) {
    TSS2_TCTI_POLL_HANDLE handles[8];
    size_t count = 8;
    if (Tss2_Tcti_GetPollHandles(tcti, handles, &count) != TSS2_RC_SUCCESS) return -1;
    size_t n = count < capacity ? count : capacity;
    for (size_t i = 0; i < n; i++) fds[i] = handles[i].fd;
    return (int)n;
}

// Bytes in and out of TPM2B buffers.
static inline const uint8_t *latchkey_tpm_name_bytes(const TPM2B_NAME *name) { return name->name; }
static inline const uint8_t *latchkey_tpm_sensitive_data_bytes(const TPM2B_SENSITIVE_DATA *data) { return data->buffer; }
static inline const uint8_t *latchkey_tpm_digest_bytes(const TPM2B_DIGEST *digest) { return digest->buffer; }

// Signed PCR policies (issue 35 part 3): the structures TPM2_LoadExternal, TPM2_VerifySignature and
// TPM2_PolicyAuthorize take.

// The public area of an ECC P-256 verification key (x, y: 32 bytes each), for TPM2_LoadExternal: sign only,
// no scheme of its own (the signature names ECDSA with SHA-256), userWithAuth; its name is what a
// PolicyAuthorize policy binds to, so the template must never change.
static inline int latchkey_tpm_p256_verify_key(TPM2B_PUBLIC *out, const uint8_t *x, size_t xLength, const uint8_t *y, size_t yLength) {
    memset(out, 0, sizeof *out);
    if (xLength != 32 || yLength != 32) return -1;
    TPMT_PUBLIC *p = &out->publicArea;
    p->type = TPM2_ALG_ECC;
    p->nameAlg = TPM2_ALG_SHA256;
    p->objectAttributes = TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_USERWITHAUTH;
    p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
    p->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    p->unique.ecc.x.size = 32;
    memcpy(p->unique.ecc.x.buffer, x, 32);
    p->unique.ecc.y.size = 32;
    memcpy(p->unique.ecc.y.buffer, y, 32);
    return 0;
}

// An ECDSA (SHA-256) signature r, s: 32 bytes each.
static inline int latchkey_tpm_ecdsa_signature(TPMT_SIGNATURE *out, const uint8_t *r, size_t rLength, const uint8_t *s, size_t sLength) {
    memset(out, 0, sizeof *out);
    if (rLength != 32 || sLength != 32) return -1;
    out->sigAlg = TPM2_ALG_ECDSA;
    out->signature.ecdsa.hash = TPM2_ALG_SHA256;
    out->signature.ecdsa.signatureR.size = 32;
    memcpy(out->signature.ecdsa.signatureR.buffer, r, 32);
    out->signature.ecdsa.signatureS.size = 32;
    memcpy(out->signature.ecdsa.signatureS.buffer, s, 32);
    return 0;
}

// TPM2B buffers from bytes (a TPM2B_NONCE is a TPM2B_DIGEST): -1 when they do not fit.
static inline int latchkey_tpm_digest(TPM2B_DIGEST *out, const uint8_t *bytes, size_t length) {
    memset(out, 0, sizeof *out);
    if (length > sizeof out->buffer) return -1;
    out->size = (UINT16)length;
    if (length) memcpy(out->buffer, bytes, length);
    return 0;
}
static inline int latchkey_tpm_name(TPM2B_NAME *out, const uint8_t *bytes, size_t length) {
    memset(out, 0, sizeof *out);
    if (length > sizeof out->name) return -1;
    out->size = (UINT16)length;
    if (length) memcpy(out->name, bytes, length);
    return 0;
}

// The ticket a trial session's TPM2_PolicyAuthorize takes (a trial session checks none): a null ticket.
static inline TPMT_TK_VERIFIED latchkey_tpm_null_verified_ticket(void) {
    TPMT_TK_VERIFIED ticket;
    memset(&ticket, 0, sizeof ticket);
    ticket.tag = TPM2_ST_VERIFIED;
    ticket.hierarchy = TPM2_RH_NULL;
    return ticket;
}

#endif
