#ifndef LATCHKEY_CPOSTGRES_SHIM_H
#define LATCHKEY_CPOSTGRES_SHIM_H
/* Declarations only: nothing links libpq; LatchkeySync loads it at run time (see Postgres.swift). */
#include <postgresql/libpq-fe.h>
#endif
