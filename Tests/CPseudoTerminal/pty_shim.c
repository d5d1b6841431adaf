#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <unistd.h>
#include "pty_shim.h"

int latchkey_test_open_pty(char *path, unsigned long size) {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0) return -1;
    if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, path, size) != 0) {
        close(master);
        return -1;
    }
    return master;
}

short latchkey_test_spawn_new_session_flag(void) { return POSIX_SPAWN_SETSID; }

int latchkey_test_pipe_close_on_exec(int descriptors[2]) { return pipe2(descriptors, O_CLOEXEC); }

int latchkey_test_spawn_add_chdir(void *actions, const char *directory) {
    return posix_spawn_file_actions_addchdir_np((posix_spawn_file_actions_t *)actions, directory);
}
