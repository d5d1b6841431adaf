#ifndef LATCHKEY_TEST_PTY_SHIM_H
#define LATCHKEY_TEST_PTY_SHIM_H

/// Opens a pseudo-terminal master and writes the slave's path into `path`; returns the master's file
/// descriptor, or -1. (posix_openpt, grantpt, unlockpt and ptsname_r need _XOPEN_SOURCE, which Swift's
/// Glibc module does not define; tests only.)
int latchkey_test_open_pty(char *path, unsigned long size);

#endif
