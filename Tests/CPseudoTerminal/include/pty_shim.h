#ifndef LATCHKEY_TEST_PTY_SHIM_H
#define LATCHKEY_TEST_PTY_SHIM_H

/// Opens a pseudo-terminal master and writes the slave's path into `path`; returns the master's file
/// descriptor, or -1. (posix_openpt, grantpt, unlockpt and ptsname_r need _XOPEN_SOURCE, which Swift's
/// Glibc module does not define; tests only.)
int latchkey_test_open_pty(char *path, unsigned long size);

/// pipe2(O_CLOEXEC) (glibc declares it only under _GNU_SOURCE): a pipe no spawned program inherits.
int latchkey_test_pipe_close_on_exec(int descriptors[2]);

/// POSIX_SPAWN_SETSID (glibc declares it only under _GNU_SOURCE): the child starts a new session.
short latchkey_test_spawn_new_session_flag(void);

/// posix_spawn_file_actions_addchdir_np (glibc 2.29, declared only under _GNU_SOURCE): the child starts in
/// `directory`.
int latchkey_test_spawn_add_chdir(void *actions, const char *directory);

#endif
