#ifndef LATCHKEY_POSIX_SHIM_H
#define LATCHKEY_POSIX_SHIM_H

#include <stddef.h>
#include <sys/types.h>
#include <spawn.h>

/* The libc calls Swift cannot make directly: variadic prctl(2), and the struct ucred, SO_PEERCRED,
   SO_PASSCRED, SCM_CREDENTIALS and POSIX_SPAWN_SETSID that glibc declares only under _GNU_SOURCE (which
   Swift's Glibc module does not define) or behind CMSG_* macros. Only LatchkeyPOSIX calls these. */

/* A process's credentials as the kernel reports them for a Unix socket peer or message sender. */
struct latchkey_credentials {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

/* getsockopt(SO_PEERPIDFD) (Linux 6.5): a pidfd, close-on-exec, for the process that called connect() — the
   very process, whatever pid it has or gets reused. -1 with errno set (ENOPROTOOPT before Linux 6.5). */
int latchkey_peer_pidfd(int socket);

/* Which namespace latchkey_pidfd_namespace opens. */
enum latchkey_namespace { LATCHKEY_NAMESPACE_USER = 0, LATCHKEY_NAMESPACE_PID = 1, LATCHKEY_NAMESPACE_MOUNT = 2 };

/* ioctl(pidfd, PIDFD_GET_USER_NAMESPACE / _PID_ / _MNT_NAMESPACE) (Linux 6.11): a descriptor, close-on-exec,
   of the namespace the process of `pidfd` is in. -1 with errno set (ENOTTY before Linux 6.11; ESRCH once the
   process has exited; EPERM when this process may not look at it). */
int latchkey_pidfd_namespace(int pidfd, enum latchkey_namespace kind);

/* One Unix socket of this network namespace, as the kernel's socket diagnostics (sock_diag) report it. */
struct latchkey_unix_socket {
    unsigned int inode;
    /* The inode of the socket it is connected to; 0 when none. */
    unsigned int peer;
    /* The address it is bound to (or, for a socket a listener accepted, the listener's): a path, or an
       abstract name starting with a zero byte; name_length 0 when it has none. Not zero-terminated. */
    unsigned char name[108];
    unsigned int name_length;
};

/* Every Unix socket of this network namespace (NETLINK_SOCK_DIAG, UDIAG_SHOW_NAME | UDIAG_SHOW_PEER), into
   `sockets`, at most `capacity` of them. Returns how many there are — more than `capacity` means call again
   with room for them all — or -1 with errno set. */
long latchkey_unix_sockets(struct latchkey_unix_socket *sockets, size_t capacity);

/* The peer of one Unix socket of this network namespace, by its inode (sock_diag's exact query, with
   UDIAG_SHOW_PEER): the inode of the socket it is connected to into `peer` (0 when it is not connected).
   Returns 0, or -1 with errno set (ENOENT when no socket has that inode). */
int latchkey_unix_socket_peer(unsigned int inode, unsigned int *peer);

/* Replaces the handlers of the signals a crash raises (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP,
   SIGSYS) — Swift's backtracer among them, which prints the memory each register points at, a passphrase or a
   secret included — with one that writes "<name>: fatal signal <n>" and a reason to standard error and ends
   the process with _exit(128 + n), on an alternate stack (a stack overflow is handled too). Async-signal-safe:
   write and _exit only. `name` is copied (at most 63 bytes). 0, or -1 with errno set. */
int latchkey_exit_on_fatal_signals(const char *name);

/* prctl(PR_SET_DUMPABLE, 0): no core file, and no ptrace attach or /proc/<pid>/mem read by another process
   of the same user (only by one with CAP_SYS_PTRACE). 0, or -1 with errno set. */
int latchkey_set_not_dumpable(void);

/* prctl(PR_GET_DUMPABLE): 1 when dumpable, 0 when not, -1 with errno set. */
int latchkey_dumpable(void);

/* Makes the real and saved group ids the effective one when they differ (setresgid); 0, or -1 with errno set.
   pam_latchkey starts the `latchkey` tool with another real group so that its exec leaves it not dumpable. */
int latchkey_adopt_effective_group(void);

/* getsockopt(SO_PEERCRED): the credentials of the process that connected (or listened). 0 or -1/errno. */
int latchkey_peer_credentials(int socket, struct latchkey_credentials *credentials);

/* setsockopt(SO_PASSCRED, 1): every message received afterwards carries its sender's credentials. */
int latchkey_enable_credential_passing(int socket);

/* recvmsg(2) of up to `length` bytes. When the message carries SCM_CREDENTIALS, they are stored and
   *has_credentials is 1 (else 0). Descriptors passed with SCM_RIGHTS are closed at once: nobody asked for
   them. Returns the byte count, 0 at end of stream, or -1 with errno set (EINTR is retried). */
ssize_t latchkey_receive_with_credentials(int socket, void *buffer, size_t length,
                                          struct latchkey_credentials *credentials, int *has_credentials);

/* accept4(SOCK_CLOEXEC): a connection whose descriptor no spawned program inherits. */
int latchkey_accept_close_on_exec(int listener);

/* pidfd_open(2): a descriptor that stays bound to this very process (never to a later one reusing its pid),
   close-on-exec. -1 with errno set (ENOSYS before Linux 5.3). */
int latchkey_pidfd_open(pid_t pid);

/* Whether the process of a pidfd has exited (its pidfd polls readable): 1, 0 while it runs, -1/errno. */
int latchkey_pidfd_exited(int pidfd);

/* open(path, O_PATH | O_DIRECTORY | O_CLOEXEC): a directory to look things up in with the *at calls
   (O_PATH is declared only under _GNU_SOURCE). The descriptor, or -1 with errno set. */
int latchkey_open_directory_path(const char *path);

/* pipe2(O_CLOEXEC): fds[0] reads, fds[1] writes. 0 or -1/errno. */
int latchkey_pipe(int fds[2]);

/* A close-on-exec, non-blocking pipe: a doorbell whose ring never blocks (a full pipe already rings). */
int latchkey_doorbell_pipe(int fds[2]);

/* POSIX_SPAWN_SETSID: the spawned child starts a new session (detached from the terminal). */
short latchkey_spawn_new_session_flag(void);

/* posix_spawn_file_actions_addclosefrom_np(actions, lowest): the child closes every descriptor from `lowest`
   up, close-on-exec or not, at that point of its file actions (glibc 2.34). 0 or an error number. */
int latchkey_spawn_add_close_from(posix_spawn_file_actions_t *actions, int lowest);

/* posix_spawn_file_actions_addchdir_np(actions, directory): the child starts in `directory`. 0 or an error
   number. */
int latchkey_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *directory);

/* ioctl(TIOCGWINSZ): the number of columns of the terminal open on `fd`; 0 when it is not a terminal or
   does not say. (ioctl is variadic.) */
int latchkey_terminal_columns(int fd);

// Names the calling thread (`prctl(PR_SET_NAME)`, at most 15 bytes kept): 0, or -1 with errno set.
int latchkey_name_current_thread(const char *name);

#endif
