#ifndef LATCHKEY_COPENSSL_SHIM_H
#define LATCHKEY_COPENSSL_SHIM_H
#include <openssl/asn1.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
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
#endif
