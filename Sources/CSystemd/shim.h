#ifndef LATCHKEY_CSYSTEMD_SHIM_H
#define LATCHKEY_CSYSTEMD_SHIM_H
#include <systemd/sd-bus.h>
// libsystemd is loaded on first use: Swift calls its functions as `latchkey_<function>` (loader.h), after
// `latchkey_csystemd_unavailable()` said it can.
#include "loader.h"
#endif
