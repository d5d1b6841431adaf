#ifndef LATCHKEY_CSYSTEMD_SHIM_H
#define LATCHKEY_CSYSTEMD_SHIM_H
#include <systemd/sd-bus.h>
#endif
