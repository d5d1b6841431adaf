#ifndef LATCHKEY_CPOSTGRES_SHIM_H
#define LATCHKEY_CPOSTGRES_SHIM_H
#include <postgresql/libpq-fe.h>
// libpq is loaded on first use: Swift calls its functions as `latchkey_<function>` (loader.h), after
// `latchkey_cpostgres_unavailable()` said it can.
#include "loader.h"
#endif
