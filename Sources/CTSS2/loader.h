#ifndef LATCHKEY_CTSS2_LOADER_H
#define LATCHKEY_CTSS2_LOADER_H
// tpm2-tss loaded when the TPM is first used, as libpq and libsystemd are: linked into `latchkey` and
// `latchkeyd`, its five libraries would be loaded (and relocated) by every process at start, though only TPM
// commands and enrolled keychains use them. Each `latchkey_<function>` below calls tpm2-tss's function of that
// name, looked up once in its library; when the library cannot be loaded (tpm2-tss not installed) a function
// returns LATCHKEY_TSS2_NOT_INSTALLED (or does nothing, or returns NULL), and `latchkey_tss2_missing()` names
// the library that is missing. The prototypes are tpm2-tss's own (Debian's libtss2-dev headers).
#include <dlfcn.h>
#include <stddef.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>

/// The status of a call whose library could not be loaded: TSS2's "not implemented" of the TCTI layer.
#define LATCHKEY_TSS2_NOT_INSTALLED ((TSS2_RC)(TSS2_TCTI_RC_LAYER | TSS2_BASE_RC_NOT_IMPLEMENTED))

static const char *const latchkey_tss2_libraries[4] = {
    "libtss2-esys.so.0", "libtss2-tctildr.so.0", "libtss2-mu.so.0", "libtss2-rc.so.0",
};

// The handle of library `index` (0 esys, 1 tctildr, 2 mu, 3 rc), opened on first use; NULL when it cannot be.
static inline void *latchkey_tss2_library(int index) {
    static void *handles[4];
    void *handle = __atomic_load_n(&handles[index], __ATOMIC_ACQUIRE);
    if (handle == NULL) {
        handle = dlopen(latchkey_tss2_libraries[index], RTLD_NOW | RTLD_LOCAL);
        if (handle != NULL) __atomic_store_n(&handles[index], handle, __ATOMIC_RELEASE);  // dlopen counts: a race is harmless
    }
    return handle;
}

// The first of tpm2-tss's libraries that cannot be loaded, or NULL when all can.
static inline const char *latchkey_tss2_missing(void) {
    for (int index = 0; index < 4; index++) {
        if (latchkey_tss2_library(index) == NULL) return latchkey_tss2_libraries[index];
    }
    return NULL;
}

// A function of library `index`, looked up once per call site's cache.
static inline void *latchkey_tss2_function(int index, const char *name, void **cache) {
    void *function = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (function == NULL) {
        void *library = latchkey_tss2_library(index);
        if (library == NULL) return NULL;
        function = dlsym(library, name);
        if (function != NULL) __atomic_store_n(cache, function, __ATOMIC_RELEASE);
    }
    return function;
}

static inline TSS2_RC latchkey_Esys_Create(ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_PUBLIC *inPublic, const TPM2B_DATA *outsideInfo, const TPML_PCR_SELECTION *creationPCR, TPM2B_PRIVATE **outPrivate, TPM2B_PUBLIC **outPublic, TPM2B_CREATION_DATA **creationData, TPM2B_DIGEST **creationHash, TPMT_TK_CREATION **creationTicket) {
    static void *cache;
    __typeof__(Esys_Create) *function = (__typeof__(Esys_Create) *)latchkey_tss2_function(0, "Esys_Create", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, parentHandle, shandle1, shandle2, shandle3, inSensitive, inPublic, outsideInfo, creationPCR, outPrivate, outPublic, creationData, creationHash, creationTicket);
}

static inline TSS2_RC latchkey_Esys_CreatePrimary(ESYS_CONTEXT *esysContext, ESYS_TR primaryHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_SENSITIVE_CREATE *inSensitive, const TPM2B_PUBLIC *inPublic, const TPM2B_DATA *outsideInfo, const TPML_PCR_SELECTION *creationPCR, ESYS_TR *objectHandle, TPM2B_PUBLIC **outPublic, TPM2B_CREATION_DATA **creationData, TPM2B_DIGEST **creationHash, TPMT_TK_CREATION **creationTicket) {
    static void *cache;
    __typeof__(Esys_CreatePrimary) *function = (__typeof__(Esys_CreatePrimary) *)latchkey_tss2_function(0, "Esys_CreatePrimary", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, primaryHandle, shandle1, shandle2, shandle3, inSensitive, inPublic, outsideInfo, creationPCR, objectHandle, outPublic, creationData, creationHash, creationTicket);
}

static inline TSS2_RC latchkey_Esys_DictionaryAttackParameters(ESYS_CONTEXT *esysContext, ESYS_TR lockHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, UINT32 newMaxTries, UINT32 newRecoveryTime, UINT32 lockoutRecovery) {
    static void *cache;
    __typeof__(Esys_DictionaryAttackParameters) *function = (__typeof__(Esys_DictionaryAttackParameters) *)latchkey_tss2_function(0, "Esys_DictionaryAttackParameters", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, lockHandle, shandle1, shandle2, shandle3, newMaxTries, newRecoveryTime, lockoutRecovery);
}

static inline void latchkey_Esys_Finalize(ESYS_CONTEXT **context) {
    static void *cache;
    __typeof__(Esys_Finalize) *function = (__typeof__(Esys_Finalize) *)latchkey_tss2_function(0, "Esys_Finalize", &cache);
    if (function == NULL) return;
    function(context);
}

static inline TSS2_RC latchkey_Esys_FlushContext(ESYS_CONTEXT *esysContext, ESYS_TR flushHandle) {
    static void *cache;
    __typeof__(Esys_FlushContext) *function = (__typeof__(Esys_FlushContext) *)latchkey_tss2_function(0, "Esys_FlushContext", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, flushHandle);
}

static inline void latchkey_Esys_Free(void *__ptr) {
    static void *cache;
    __typeof__(Esys_Free) *function = (__typeof__(Esys_Free) *)latchkey_tss2_function(0, "Esys_Free", &cache);
    if (function == NULL) return;
    function(__ptr);
}

static inline TSS2_RC latchkey_Esys_GetCapability(ESYS_CONTEXT *esysContext, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, TPM2_CAP capability, UINT32 property, UINT32 propertyCount, TPMI_YES_NO *moreData, TPMS_CAPABILITY_DATA **capabilityData) {
    static void *cache;
    __typeof__(Esys_GetCapability) *function = (__typeof__(Esys_GetCapability) *)latchkey_tss2_function(0, "Esys_GetCapability", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, shandle1, shandle2, shandle3, capability, property, propertyCount, moreData, capabilityData);
}

static inline TSS2_RC latchkey_Esys_Initialize(ESYS_CONTEXT **esys_context, TSS2_TCTI_CONTEXT *tcti, TSS2_ABI_VERSION *abiVersion) {
    static void *cache;
    __typeof__(Esys_Initialize) *function = (__typeof__(Esys_Initialize) *)latchkey_tss2_function(0, "Esys_Initialize", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esys_context, tcti, abiVersion);
}

static inline TSS2_RC latchkey_Esys_Load(ESYS_CONTEXT *esysContext, ESYS_TR parentHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_PRIVATE *inPrivate, const TPM2B_PUBLIC *inPublic, ESYS_TR *objectHandle) {
    static void *cache;
    __typeof__(Esys_Load) *function = (__typeof__(Esys_Load) *)latchkey_tss2_function(0, "Esys_Load", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, parentHandle, shandle1, shandle2, shandle3, inPrivate, inPublic, objectHandle);
}

static inline TSS2_RC latchkey_Esys_PCR_Extend(ESYS_CONTEXT *esysContext, ESYS_TR pcrHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPML_DIGEST_VALUES *digests) {
    static void *cache;
    __typeof__(Esys_PCR_Extend) *function = (__typeof__(Esys_PCR_Extend) *)latchkey_tss2_function(0, "Esys_PCR_Extend", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, pcrHandle, shandle1, shandle2, shandle3, digests);
}

static inline TSS2_RC latchkey_Esys_PCR_Read(ESYS_CONTEXT *esysContext, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPML_PCR_SELECTION *pcrSelectionIn, UINT32 *pcrUpdateCounter, TPML_PCR_SELECTION **pcrSelectionOut, TPML_DIGEST **pcrValues) {
    static void *cache;
    __typeof__(Esys_PCR_Read) *function = (__typeof__(Esys_PCR_Read) *)latchkey_tss2_function(0, "Esys_PCR_Read", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, shandle1, shandle2, shandle3, pcrSelectionIn, pcrUpdateCounter, pcrSelectionOut, pcrValues);
}

static inline TSS2_RC latchkey_Esys_PolicyGetDigest(ESYS_CONTEXT *esysContext, ESYS_TR policySession, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, TPM2B_DIGEST **policyDigest) {
    static void *cache;
    __typeof__(Esys_PolicyGetDigest) *function = (__typeof__(Esys_PolicyGetDigest) *)latchkey_tss2_function(0, "Esys_PolicyGetDigest", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, policySession, shandle1, shandle2, shandle3, policyDigest);
}

static inline TSS2_RC latchkey_Esys_PolicyPCR(ESYS_CONTEXT *esysContext, ESYS_TR policySession, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_DIGEST *pcrDigest, const TPML_PCR_SELECTION *pcrs) {
    static void *cache;
    __typeof__(Esys_PolicyPCR) *function = (__typeof__(Esys_PolicyPCR) *)latchkey_tss2_function(0, "Esys_PolicyPCR", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, policySession, shandle1, shandle2, shandle3, pcrDigest, pcrs);
}

static inline TSS2_RC latchkey_Esys_Shutdown(ESYS_CONTEXT *esysContext, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, TPM2_SU shutdownType) {
    static void *cache;
    __typeof__(Esys_Shutdown) *function = (__typeof__(Esys_Shutdown) *)latchkey_tss2_function(0, "Esys_Shutdown", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, shandle1, shandle2, shandle3, shutdownType);
}

static inline TSS2_RC latchkey_Esys_StartAuthSession(ESYS_CONTEXT *esysContext, ESYS_TR tpmKey, ESYS_TR bind, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_NONCE *nonceCaller, TPM2_SE sessionType, const TPMT_SYM_DEF *symmetric, TPMI_ALG_HASH authHash, ESYS_TR *sessionHandle) {
    static void *cache;
    __typeof__(Esys_StartAuthSession) *function = (__typeof__(Esys_StartAuthSession) *)latchkey_tss2_function(0, "Esys_StartAuthSession", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, tpmKey, bind, shandle1, shandle2, shandle3, nonceCaller, sessionType, symmetric, authHash, sessionHandle);
}

static inline TSS2_RC latchkey_Esys_TRSess_SetAttributes(ESYS_CONTEXT *esysContext, ESYS_TR session, TPMA_SESSION flags, TPMA_SESSION mask) {
    static void *cache;
    __typeof__(Esys_TRSess_SetAttributes) *function = (__typeof__(Esys_TRSess_SetAttributes) *)latchkey_tss2_function(0, "Esys_TRSess_SetAttributes", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, session, flags, mask);
}

static inline TSS2_RC latchkey_Esys_TR_FromTPMPublic(ESYS_CONTEXT *esysContext, TPM2_HANDLE tpm_handle, ESYS_TR optionalSession1, ESYS_TR optionalSession2, ESYS_TR optionalSession3, ESYS_TR *object) {
    static void *cache;
    __typeof__(Esys_TR_FromTPMPublic) *function = (__typeof__(Esys_TR_FromTPMPublic) *)latchkey_tss2_function(0, "Esys_TR_FromTPMPublic", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, tpm_handle, optionalSession1, optionalSession2, optionalSession3, object);
}

static inline TSS2_RC latchkey_Esys_TR_GetName(ESYS_CONTEXT *esysContext, ESYS_TR handle, TPM2B_NAME **name) {
    static void *cache;
    __typeof__(Esys_TR_GetName) *function = (__typeof__(Esys_TR_GetName) *)latchkey_tss2_function(0, "Esys_TR_GetName", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, handle, name);
}

static inline TSS2_RC latchkey_Esys_TR_GetTpmHandle(ESYS_CONTEXT *esys_context, ESYS_TR esys_handle, TPM2_HANDLE *tpm_handle) {
    static void *cache;
    __typeof__(Esys_TR_GetTpmHandle) *function = (__typeof__(Esys_TR_GetTpmHandle) *)latchkey_tss2_function(0, "Esys_TR_GetTpmHandle", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esys_context, esys_handle, tpm_handle);
}

static inline TSS2_RC latchkey_Esys_TR_SetAuth(ESYS_CONTEXT *esysContext, ESYS_TR handle, TPM2B_AUTH const *authValue) {
    static void *cache;
    __typeof__(Esys_TR_SetAuth) *function = (__typeof__(Esys_TR_SetAuth) *)latchkey_tss2_function(0, "Esys_TR_SetAuth", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, handle, authValue);
}

static inline TSS2_RC latchkey_Esys_Unseal(ESYS_CONTEXT *esysContext, ESYS_TR itemHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, TPM2B_SENSITIVE_DATA **outData) {
    static void *cache;
    __typeof__(Esys_Unseal) *function = (__typeof__(Esys_Unseal) *)latchkey_tss2_function(0, "Esys_Unseal", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, itemHandle, shandle1, shandle2, shandle3, outData);
}

static inline TSS2_RC latchkey_Tss2_MU_TPM2B_PRIVATE_Marshal(TPM2B_PRIVATE const *src, uint8_t buffer[], size_t buffer_size, size_t *offset) {
    static void *cache;
    __typeof__(Tss2_MU_TPM2B_PRIVATE_Marshal) *function = (__typeof__(Tss2_MU_TPM2B_PRIVATE_Marshal) *)latchkey_tss2_function(2, "Tss2_MU_TPM2B_PRIVATE_Marshal", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(src, buffer, buffer_size, offset);
}

static inline TSS2_RC latchkey_Tss2_MU_TPM2B_PRIVATE_Unmarshal(uint8_t const buffer[], size_t buffer_size, size_t *offset, TPM2B_PRIVATE *dest) {
    static void *cache;
    __typeof__(Tss2_MU_TPM2B_PRIVATE_Unmarshal) *function = (__typeof__(Tss2_MU_TPM2B_PRIVATE_Unmarshal) *)latchkey_tss2_function(2, "Tss2_MU_TPM2B_PRIVATE_Unmarshal", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(buffer, buffer_size, offset, dest);
}

static inline TSS2_RC latchkey_Tss2_MU_TPM2B_PUBLIC_Marshal(TPM2B_PUBLIC const *src, uint8_t buffer[], size_t buffer_size, size_t *offset) {
    static void *cache;
    __typeof__(Tss2_MU_TPM2B_PUBLIC_Marshal) *function = (__typeof__(Tss2_MU_TPM2B_PUBLIC_Marshal) *)latchkey_tss2_function(2, "Tss2_MU_TPM2B_PUBLIC_Marshal", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(src, buffer, buffer_size, offset);
}

static inline TSS2_RC latchkey_Tss2_MU_TPM2B_PUBLIC_Unmarshal(uint8_t const buffer[], size_t buffer_size, size_t *offset, TPM2B_PUBLIC *dest) {
    static void *cache;
    __typeof__(Tss2_MU_TPM2B_PUBLIC_Unmarshal) *function = (__typeof__(Tss2_MU_TPM2B_PUBLIC_Unmarshal) *)latchkey_tss2_function(2, "Tss2_MU_TPM2B_PUBLIC_Unmarshal", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(buffer, buffer_size, offset, dest);
}

static inline const char * latchkey_Tss2_RC_Decode(TSS2_RC rc) {
    static void *cache;
    __typeof__(Tss2_RC_Decode) *function = (__typeof__(Tss2_RC_Decode) *)latchkey_tss2_function(3, "Tss2_RC_Decode", &cache);
    if (function == NULL) return NULL;
    return function(rc);
}

static inline void latchkey_Tss2_TctiLdr_Finalize(TSS2_TCTI_CONTEXT **context) {
    static void *cache;
    __typeof__(Tss2_TctiLdr_Finalize) *function = (__typeof__(Tss2_TctiLdr_Finalize) *)latchkey_tss2_function(1, "Tss2_TctiLdr_Finalize", &cache);
    if (function == NULL) return;
    function(context);
}

static inline TSS2_RC latchkey_Tss2_TctiLdr_Initialize(const char *nameConf, TSS2_TCTI_CONTEXT **context) {
    static void *cache;
    __typeof__(Tss2_TctiLdr_Initialize) *function = (__typeof__(Tss2_TctiLdr_Initialize) *)latchkey_tss2_function(1, "Tss2_TctiLdr_Initialize", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(nameConf, context);
}

// Signed PCR policies (issue 35 part 3: TPM2_PolicyAuthorize): loading the signer's public key, checking a
// policy's signature and authorizing it.

static inline TSS2_RC latchkey_Esys_LoadExternal(ESYS_CONTEXT *esysContext, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_SENSITIVE *inPrivate, const TPM2B_PUBLIC *inPublic, ESYS_TR hierarchy, ESYS_TR *objectHandle) {
    static void *cache;
    __typeof__(Esys_LoadExternal) *function = (__typeof__(Esys_LoadExternal) *)latchkey_tss2_function(0, "Esys_LoadExternal", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, shandle1, shandle2, shandle3, inPrivate, inPublic, hierarchy, objectHandle);
}

static inline TSS2_RC latchkey_Esys_VerifySignature(ESYS_CONTEXT *esysContext, ESYS_TR keyHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_DIGEST *digest, const TPMT_SIGNATURE *signature, TPMT_TK_VERIFIED **validation) {
    static void *cache;
    __typeof__(Esys_VerifySignature) *function = (__typeof__(Esys_VerifySignature) *)latchkey_tss2_function(0, "Esys_VerifySignature", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, keyHandle, shandle1, shandle2, shandle3, digest, signature, validation);
}

static inline TSS2_RC latchkey_Esys_PolicyAuthorize(ESYS_CONTEXT *esysContext, ESYS_TR policySession, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_DIGEST *approvedPolicy, const TPM2B_NONCE *policyRef, const TPM2B_NAME *keySign, const TPMT_TK_VERIFIED *checkTicket) {
    static void *cache;
    __typeof__(Esys_PolicyAuthorize) *function = (__typeof__(Esys_PolicyAuthorize) *)latchkey_tss2_function(0, "Esys_PolicyAuthorize", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, policySession, shandle1, shandle2, shandle3, approvedPolicy, policyRef, keySign, checkTicket);
}

// MARK: Keys made in the TPM (issue 35 part 4): signing and ECDH with a TPM-resident P-256 key.

static inline TSS2_RC latchkey_Esys_ECDH_ZGen(ESYS_CONTEXT *esysContext, ESYS_TR keyHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_ECC_POINT *inPoint, TPM2B_ECC_POINT **outPoint) {
    static void *cache;
    __typeof__(Esys_ECDH_ZGen) *function = (__typeof__(Esys_ECDH_ZGen) *)latchkey_tss2_function(0, "Esys_ECDH_ZGen", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, keyHandle, shandle1, shandle2, shandle3, inPoint, outPoint);
}

static inline TSS2_RC latchkey_Esys_Sign(ESYS_CONTEXT *esysContext, ESYS_TR keyHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_DIGEST *digest, const TPMT_SIG_SCHEME *inScheme, const TPMT_TK_HASHCHECK *validation, TPMT_SIGNATURE **signature) {
    static void *cache;
    __typeof__(Esys_Sign) *function = (__typeof__(Esys_Sign) *)latchkey_tss2_function(0, "Esys_Sign", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, keyHandle, shandle1, shandle2, shandle3, digest, inScheme, validation, signature);
}

// MARK: End of the keys made in the TPM.

// MARK: The lockout authorization (issue 50): TPM2_HierarchyChangeAuth of the lockout hierarchy, which gives
// the TPM a lockout authValue so that no one without it can reset the dictionary-attack counter.

static inline TSS2_RC latchkey_Esys_HierarchyChangeAuth(ESYS_CONTEXT *esysContext, ESYS_TR authHandle, ESYS_TR shandle1, ESYS_TR shandle2, ESYS_TR shandle3, const TPM2B_AUTH *newAuth) {
    static void *cache;
    __typeof__(Esys_HierarchyChangeAuth) *function = (__typeof__(Esys_HierarchyChangeAuth) *)latchkey_tss2_function(0, "Esys_HierarchyChangeAuth", &cache);
    if (function == NULL) return LATCHKEY_TSS2_NOT_INSTALLED;
    return function(esysContext, authHandle, shandle1, shandle2, shandle3, newAuth);
}

// MARK: End of the lockout authorization.

#endif
