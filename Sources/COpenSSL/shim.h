#ifndef LATCHKEY_COPENSSL_SHIM_H
#define LATCHKEY_COPENSSL_SHIM_H
#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/pkcs7.h>
#include <openssl/provider.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include "loader.h"

// The OpenSSL macros and unions Swift cannot use directly, as inline functions. libcrypto is loaded on first
// use (loader.h), so these call its functions through their `latchkey_` wrappers: each macro is spelled out
// as what it expands to (`sk_X509_num(s)` is `OPENSSL_sk_num(ossl_check_const_X509_sk_type(s))`; the
// `ossl_check_` functions are the header's own casts), and tools/generate-loaders finds the functions here.

/// `sk_GENERAL_NAME_num`.
static inline int latchkey_general_names_count(const GENERAL_NAMES *names) {
    return latchkey_OPENSSL_sk_num(ossl_check_const_GENERAL_NAME_sk_type(names));
}

/// The `index`th name's type (`GEN_EMAIL`, `GEN_DNS`, …) and, for the IA5String kinds, its string.
static inline int latchkey_general_name_at(const GENERAL_NAMES *names, int index, const ASN1_STRING **text) {
    const GENERAL_NAME *name = latchkey_OPENSSL_sk_value(ossl_check_const_GENERAL_NAME_sk_type(names), index);
    *text = NULL;
    if (name == NULL) return -1;
    if (name->type == GEN_EMAIL || name->type == GEN_DNS || name->type == GEN_URI) *text = name->d.ia5;
    return name->type;
}

/// `OPENSSL_free`.
static inline void latchkey_openssl_free(void *pointer) { latchkey_CRYPTO_free(pointer, OPENSSL_FILE, OPENSSL_LINE); }

/// `EVP_PKEY_KEYPAIR` and `EVP_PKEY_PUBLIC_KEY`, the selections of `EVP_PKEY_fromdata`.
static inline int latchkey_selection_keypair(void) { return EVP_PKEY_KEYPAIR; }
static inline int latchkey_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }

/// `EVP_CTRL_GCM_SET_IVLEN`, `EVP_CTRL_GCM_GET_TAG`, `EVP_CTRL_GCM_SET_TAG`.
static inline int latchkey_gcm_set_iv_length(void) { return EVP_CTRL_GCM_SET_IVLEN; }
static inline int latchkey_gcm_get_tag(void) { return EVP_CTRL_GCM_GET_TAG; }
static inline int latchkey_gcm_set_tag(void) { return EVP_CTRL_GCM_SET_TAG; }

/// `EVP_PKEY_RSA` and `EVP_PKEY_EC`.
static inline int latchkey_pkey_rsa(void) { return EVP_PKEY_RSA; }
static inline int latchkey_pkey_ec(void) { return EVP_PKEY_EC; }

/// `sk_X509_num`, `sk_X509_value` and `sk_X509_pop_free(…, X509_free)`.
static inline int latchkey_certificates_count(const STACK_OF(X509) *stack) { return latchkey_OPENSSL_sk_num(ossl_check_const_X509_sk_type(stack)); }
static inline X509 *latchkey_certificate_at(const STACK_OF(X509) *stack, int index) { return (X509 *)latchkey_OPENSSL_sk_value(ossl_check_const_X509_sk_type(stack), index); }
static inline void latchkey_certificates_free(STACK_OF(X509) *stack) { latchkey_OPENSSL_sk_pop_free(ossl_check_X509_sk_type(stack), ossl_check_X509_freefunc_type(latchkey_X509_free)); }

/// `sk_X509_new_null` and `sk_X509_push`.
static inline STACK_OF(X509) *latchkey_certificates_new(void) { return (STACK_OF(X509) *)latchkey_OPENSSL_sk_new_null(); }
static inline int latchkey_certificates_push(STACK_OF(X509) *stack, X509 *certificate) { return latchkey_OPENSSL_sk_push(ossl_check_X509_sk_type(stack), ossl_check_X509_type(certificate)); }

/// `BIO_get_mem_data`: the bytes written to a memory BIO so far.
static inline long latchkey_bio_contents(BIO *bio, char **data) { return latchkey_BIO_ctrl(bio, BIO_CTRL_INFO, 0, (char *)data); }
/// The PKCS #7 content type of a PKCS #12 file's authenticated safe, and the algorithm of an encrypted one.
static inline int latchkey_pkcs7_nid(const PKCS7 *p7) { return latchkey_OBJ_obj2nid(p7->type); }
static inline const X509_ALGOR *latchkey_pkcs7_encryption(const PKCS7 *p7) {
    if (latchkey_OBJ_obj2nid(p7->type) != NID_pkcs7_encrypted || p7->d.encrypted == NULL || p7->d.encrypted->enc_data == NULL) return NULL;
    return p7->d.encrypted->enc_data->algorithm;
}

/// `sk_PKCS7_*` and `sk_PKCS12_SAFEBAG_*`.
static inline int latchkey_pkcs7_count(const STACK_OF(PKCS7) *stack) { return latchkey_OPENSSL_sk_num(ossl_check_const_PKCS7_sk_type(stack)); }
static inline PKCS7 *latchkey_pkcs7_at(const STACK_OF(PKCS7) *stack, int index) { return (PKCS7 *)latchkey_OPENSSL_sk_value(ossl_check_const_PKCS7_sk_type(stack), index); }
static inline void latchkey_pkcs7_free_all(STACK_OF(PKCS7) *stack) { latchkey_OPENSSL_sk_pop_free(ossl_check_PKCS7_sk_type(stack), ossl_check_PKCS7_freefunc_type(latchkey_PKCS7_free)); }
static inline int latchkey_safebag_count(const STACK_OF(PKCS12_SAFEBAG) *stack) { return latchkey_OPENSSL_sk_num(ossl_check_const_PKCS12_SAFEBAG_sk_type(stack)); }
static inline PKCS12_SAFEBAG *latchkey_safebag_at(const STACK_OF(PKCS12_SAFEBAG) *stack, int index) { return (PKCS12_SAFEBAG *)latchkey_OPENSSL_sk_value(ossl_check_const_PKCS12_SAFEBAG_sk_type(stack), index); }
static inline void latchkey_safebags_free(STACK_OF(PKCS12_SAFEBAG) *stack) { latchkey_OPENSSL_sk_pop_free(ossl_check_PKCS12_SAFEBAG_sk_type(stack), ossl_check_PKCS12_SAFEBAG_freefunc_type(latchkey_PKCS12_SAFEBAG_free)); }

/// What deriving a key with a password-based algorithm costs, read from its parameters before anything is
/// derived: the iteration count of PBKDF2 (PBES2), of PKCS #5 v1.5 or of PKCS #12's own derivation; for
/// scrypt, N·r·p (*is_scrypt set). 0 for an algorithm that is not password-based; UINT64_MAX for parameters
/// that cannot be read. (ASN1_ITEM_rptr and the PBE parameter types are macros and structs Swift cannot use.)
static inline uint64_t latchkey_password_cost(const X509_ALGOR *alg, int *is_scrypt) {
    *is_scrypt = 0;
    if (alg == NULL) return 0;
    int nid = latchkey_OBJ_obj2nid(alg->algorithm);
    uint64_t value = 0;
    if (nid == NID_pbes2) {
        PBE2PARAM *pbe2 = latchkey_ASN1_TYPE_unpack_sequence(latchkey_PBE2PARAM_it(), alg->parameter);
        if (pbe2 == NULL || pbe2->keyfunc == NULL) { latchkey_PBE2PARAM_free(pbe2); return UINT64_MAX; }
        int kdf = latchkey_OBJ_obj2nid(pbe2->keyfunc->algorithm);
        uint64_t cost = UINT64_MAX;
        if (kdf == NID_id_pbkdf2) {
            PBKDF2PARAM *kdf2 = latchkey_ASN1_TYPE_unpack_sequence(latchkey_PBKDF2PARAM_it(), pbe2->keyfunc->parameter);
            if (kdf2 != NULL && kdf2->iter != NULL && latchkey_ASN1_INTEGER_get_uint64(&value, kdf2->iter) == 1) cost = value;
            latchkey_PBKDF2PARAM_free(kdf2);
        } else if (kdf == NID_id_scrypt) {
            SCRYPT_PARAMS *scrypt = latchkey_ASN1_TYPE_unpack_sequence(latchkey_SCRYPT_PARAMS_it(), pbe2->keyfunc->parameter);
            uint64_t n = 0, r = 0, p = 0;
            if (scrypt != NULL && latchkey_ASN1_INTEGER_get_uint64(&n, scrypt->costParameter) == 1 && latchkey_ASN1_INTEGER_get_uint64(&r, scrypt->blockSize) == 1
                && latchkey_ASN1_INTEGER_get_uint64(&p, scrypt->parallelizationParameter) == 1 && n > 0 && r > 0 && p > 0
                && n <= UINT64_MAX / r && n * r <= UINT64_MAX / p) {
                cost = n * r * p;
            }
            *is_scrypt = 1;
            latchkey_SCRYPT_PARAMS_free(scrypt);
        }
        latchkey_PBE2PARAM_free(pbe2);
        return cost;
    }
    if (latchkey_EVP_PBE_find(EVP_PBE_TYPE_OUTER, nid, NULL, NULL, NULL) == 1) {
        PBEPARAM *pbe = latchkey_ASN1_TYPE_unpack_sequence(latchkey_PBEPARAM_it(), alg->parameter);
        uint64_t cost = UINT64_MAX;
        if (pbe != NULL && pbe->iter != NULL && latchkey_ASN1_INTEGER_get_uint64(&value, pbe->iter) == 1) cost = value;
        latchkey_PBEPARAM_free(pbe);
        return cost;
    }
    return 0;
}
#endif
