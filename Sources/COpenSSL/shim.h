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
#include <openssl/provider.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// The OpenSSL macros and unions Swift cannot use directly, as inline functions.

/// `sk_GENERAL_NAME_num`.
static inline int latchkey_general_names_count(const GENERAL_NAMES *names) {
    return sk_GENERAL_NAME_num(names);
}

/// The `index`th name's type (`GEN_EMAIL`, `GEN_DNS`, …) and, for the IA5String kinds, its string.
static inline int latchkey_general_name_at(const GENERAL_NAMES *names, int index, const ASN1_STRING **text) {
    const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, index);
    *text = NULL;
    if (name == NULL) return -1;
    if (name->type == GEN_EMAIL || name->type == GEN_DNS || name->type == GEN_URI) *text = name->d.ia5;
    return name->type;
}

/// `OPENSSL_free`.
static inline void latchkey_openssl_free(void *pointer) { OPENSSL_free(pointer); }

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
static inline int latchkey_certificates_count(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *latchkey_certificate_at(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
static inline void latchkey_certificates_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

/// `sk_X509_new_null` and `sk_X509_push`.
static inline STACK_OF(X509) *latchkey_certificates_new(void) { return sk_X509_new_null(); }
static inline int latchkey_certificates_push(STACK_OF(X509) *stack, X509 *certificate) { return sk_X509_push(stack, certificate); }

/// `BIO_get_mem_data`: the bytes written to a memory BIO so far.
static inline long latchkey_bio_contents(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
#endif
