#ifndef LATCHKEY_CSODIUM_SHIM_H
#define LATCHKEY_CSODIUM_SHIM_H
#include <sodium.h>
#endif
