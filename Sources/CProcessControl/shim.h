#ifndef LATCHKEY_CPROCESSCONTROL_SHIM_H
#define LATCHKEY_CPROCESSCONTROL_SHIM_H
#include <sys/prctl.h>

/* prctl(2) is variadic, which Swift cannot call; these fix its arguments. */

/* Marks the process not dumpable: no core file, and no ptrace attach or /proc/<pid>/mem read by another
   process of the same user (only by one with CAP_SYS_PTRACE). Returns 0, or -1 with errno set. */
static inline int latchkey_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

/* 1 when the process is dumpable, 0 when not, -1 with errno set on failure. */
static inline int latchkey_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

#endif
