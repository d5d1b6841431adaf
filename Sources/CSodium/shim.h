#ifndef LATCHKEY_CSODIUM_SHIM_H
#define LATCHKEY_CSODIUM_SHIM_H
#include <sodium.h>
// libsodium is loaded on first use: Swift calls its functions as `latchkey_<function>` (loader.h).
#include "loader.h"
#endif
