#ifndef LATCHKEY_CSQLITE_SHIM_H
#define LATCHKEY_CSQLITE_SHIM_H
#include <sqlite3.h>
// libsqlite3 is loaded on first use: Swift calls its functions as `latchkey_<function>` (loader.h).
#include "loader.h"

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type latchkey_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// sqlite3_db_config is variadic; Swift cannot call variadic C functions (the loader gives the function itself).
static inline int latchkey_sqlite_db_config_int(sqlite3 *db, int op, int value) {
    return latchkey_sqlite3_db_config(db, op, value, (int *)0);
}
#endif
