#ifndef LATCHKEY_CPOSTGRES_SHIM_H
#define LATCHKEY_CPOSTGRES_SHIM_H
#include <libpq-fe.h>
#endif
