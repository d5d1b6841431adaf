/*
 * pam_latchkey: the login session unlocks the user's Latchkey keychain with the login password.
 *
 * Written in C, not Swift: PAM loads a module into every process that authenticates (login, sshd, gdm,
 * sudo, screen lockers), and a Swift module would load the Swift runtime and Foundation into each of them
 * (tens of MiB, their own threads and signal handlers) for a few hundred lines of socket code. Everything
 * the keychain does stays in Swift: this module only keeps the typed password, hands it to the user's
 * latchkeyd over the agent's own socket protocol, and runs the `latchkey` tool as the user to create the
 * keychain or re-wrap it. See docs/LOGIN.md.
 *
 * auth      keeps PAM_AUTHTOK (pam_set_data, wiped by its cleanup; never prompts); when the user's agent
 *           already answers (a screen locker's stack), unlocks at once. When it does not (a login: the
 *           session's runtime directory and agent come later) and the user has a keychain, starts the
 *           `latchkey` tool deriving the keychain's unlock key from the password, which goes on while the
 *           rest of the login runs (the key derivation is most of a login's wait: docs/LOGIN.md).
 * session   (after pam_systemd) unlocks through $XDG_RUNTIME_DIR/latchkey/agent.sock, whose directory and
 *           socket must belong to the user and whose listener must run as the user (SO_PEERCRED) — with the
 *           key the auth step is deriving (the child connects first, so the agent starts meanwhile, then reads
 *           the key), else (or when the agent does not take it: the password changed meanwhile, an older
 *           agent) with the password; with
 *           `create`, first creates the default keychain when there is none. An agent that was started
 *           before the keychain existed (latchkeyd --wait-for-keychain) answers errSecNoSuchKeychain and
 *           holds the password until the keychain appears: logged at LOG_INFO, not as a failure. A login that gave no password
 *           unlocks through the keychain's unattended TPM unlock when it is enrolled (`latchkey tpm enroll
 *           --unattended`), else gets one message saying the keychain stays locked.
 * password  on the PAM_UPDATE_AUTHTOK pass re-wraps the keychain from PAM_OLDAUTHTOK to PAM_AUTHTOK; a
 *           change without the old password (root's `passwd user`) leaves a marker, and the next login asks
 *           for the old keychain password once and re-wraps.
 *
 * Options: only_if=service[,service...]  act only for these PAM services
 *          create                        create the default keychain at the first login
 *          latchkey=/path                the latchkey tool (default /usr/local/bin/latchkey, else /usr/bin/latchkey)
 *          latchkeyd=/path               the agent it hands the password to (default /usr/local/bin/latchkeyd, else
 *                                        /usr/bin/latchkeyd): a root-owned file only root may replace
 *          child_seconds=N               a shorter bound than 90 s on each child
 *          debug                         log every step to the journal
 *
 * Every entry point returns PAM_SUCCESS or PAM_IGNORE: a failure is logged (pam_syslog) and the login goes on.
 * The password never reaches argv, the environment or a file, and no other program of the user can see it
 * (issue 50; docs/LOGIN.md, "What no other program of the user sees"):
 *  - it is copied into a forked child that is not dumpable and keeps none of the login process's descriptors
 *    (close_range); the child that hands it to the agent stays root (so the agent knows the login's unlock,
 *    which its throttle never holds back), every other becomes the user (its effective ids changed, which
 *    leaves it not dumpable);
 *  - the `latchkey` tool runs with a real group other than its effective one (the spare group, nogroup),
 *    so the kernel treats its exec as a change of privilege and leaves it not dumpable from its first
 *    instruction — its /proc/<pid>/fd, mem and a ptrace attach stay closed to the user's programs; the
 *    tool then takes its effective group as its real one (LatchkeyCommandLine.main);
 *  - the agent gets the password only when the root parent vouches for the process that answers on the
 *    socket: the sender of every byte received (SO_PASSCRED) is one process, which runs the configured
 *    latchkeyd, maps code (and anything private) only from files of root's that nobody else may write, is
 *    not traced nor dumpable, runs as the user and holds the connection's other end (NETLINK_SOCK_DIAG) —
 *    checked after the greeting, with nothing waiting behind it, and again after the hello's answer. A stack
 *    run by a program of the user (a screen locker) cannot look at the agent and does not vouch;
 *  - the root parent bounds each child itself (a pidfd, then SIGKILL to the child's session), so a child
 *    or tool the user stops holds neither the login nor the password.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define PAM_SM_AUTH
#define PAM_SM_SESSION
#define PAM_SM_PASSWORD
#include <security/pam_ext.h>
#include <security/pam_modules.h>

/* The agent protocol (Sources/LatchkeyProtocol): a 4-byte big-endian length, then "LK", the version, and the
 * message; integers in messages are little-endian, fields a 32-bit length and the bytes. */
#define LK_VERSION 8
#define LK_OP_HELLO 1
#define LK_OP_UNLOCK 3
#define LK_OP_UNLOCK_UNATTENDED 19
/* Unlock with the key the password derives (DerivedUnlockKey in Sources/LatchkeyEngine): the KDF record it was
 * derived under (33 bytes) and the Argon2id output (32). The agent takes it from root's hand-over only. */
#define LK_OP_UNLOCK_DERIVED 25
#define LK_DERIVED_KEY_BYTES 65
#define LK_CHALLENGE 16
#define LK_ERR_AUTH_FAILED (-25293) /* errSecAuthFailed */
/* errSecNoSuchKeychain: the agent waits for a keychain that does not exist yet (latchkeyd --wait-for-keychain)
 * and holds the password the unlock handed over, to unlock the keychain with once it appears. */
#define LK_ERR_NO_SUCH_KEYCHAIN (-25294)
#define LK_TIMEOUT_SECONDS 20
/* The most a child that acts as the user may take, whatever it waits for: the root parent kills it then. */
#define LK_CHILD_SECONDS 90
/* The child's own alarm (and the tool's), later than the parent's bound: they end the child if the login
 * process itself is gone, and never race the parent, which ends them first and says so. */
#define LK_BACKSTOP_SECONDS 2
/* In a child, the descriptor of its channel to the root parent (which vouches for the agent). */
#define LK_CHANNEL_FD 3
/* In the child that hands a derived key over, the pipe the auth step's derivation writes the key to. */
#define LK_KEY_FD 4

/* What a child that acted as the user reports (its exit status). */
enum outcome {
    OUTCOME_DONE = 0,
    OUTCOME_NO_AGENT = 10,     /* nothing listens: no socket, or the connection was refused */
    OUTCOME_UNTRUSTED = 11,    /* the socket, its directory or its listener is not the user's */
    OUTCOME_WRONG_PASSWORD = 12,
    OUTCOME_REFUSED = 13,      /* the agent answered with another error */
    OUTCOME_BROKEN = 14,       /* the conversation broke off (the agent ended, a timeout) */
    OUTCOME_NO_KEYCHAIN = 15,
    OUTCOME_EXISTS = 16,
    OUTCOME_SETUP = 17,        /* the child could not become the user */
    OUTCOME_HELD = 18,         /* the agent holds the password until the keychain appears */
    OUTCOME_NOT_VOUCHED = 19,  /* the process answering on the socket is not an agent the parent vouches for */
    OUTCOME_TIMEOUT = 20,      /* (the parent's) the child did not end within child_seconds and was killed */
    OUTCOME_NO_KEY = 21,       /* the derivation the auth step started wrote no key (not the keychain's password) */
};

static const char *const data_key = "pam_latchkey_authtok";
static const char *const unlocked_key = "pam_latchkey_unlocked";
static const char *const early_key = "pam_latchkey_early_key";

struct options {
    const char *only_if;
    const char *latchkey;
    const char *latchkeyd;
    int create;
    int debug;
    unsigned child_seconds; /* child_seconds=N (1 to LK_CHILD_SECONDS): a shorter bound on each child */
};

static void parse_options(int argc, const char **argv, struct options *options) {
    memset(options, 0, sizeof *options);
    options->child_seconds = LK_CHILD_SECONDS;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "only_if=", 8) == 0) options->only_if = argv[i] + 8;
        else if (strncmp(argv[i], "latchkey=", 9) == 0) options->latchkey = argv[i] + 9;
        else if (strncmp(argv[i], "latchkeyd=", 10) == 0) options->latchkeyd = argv[i] + 10;
        else if (strcmp(argv[i], "create") == 0) options->create = 1;
        else if (strcmp(argv[i], "debug") == 0) options->debug = 1;
        else if (strncmp(argv[i], "child_seconds=", 14) == 0) {
            char *end = NULL;
            unsigned long seconds = strtoul(argv[i] + 14, &end, 10);
            /* Only a shorter bound is taken: the login never waits longer than LK_CHILD_SECONDS. */
            if (end != argv[i] + 14 && *end == '\0' && seconds >= 1 && seconds <= LK_CHILD_SECONDS)
                options->child_seconds = (unsigned)seconds;
        }
        else if (strcmp(argv[i], "use_authtok") == 0) continue; /* always so: this module never prompts for it */
    }
}

/* Whether `only_if` allows this service (no `only_if`: every service). */
static int service_allowed(pam_handle_t *pamh, const struct options *options) {
    if (options->only_if == NULL) return 1;
    const void *item = NULL;
    if (pam_get_item(pamh, PAM_SERVICE, &item) != PAM_SUCCESS || item == NULL) return 0;
    const char *service = item;
    size_t length = strlen(service);
    const char *list = options->only_if;
    while (*list) {
        const char *end = strchr(list, ',');
        size_t size = end ? (size_t)(end - list) : strlen(list);
        if (size == length && strncmp(list, service, size) == 0) return 1;
        if (!end) break;
        list = end + 1;
    }
    return 0;
}

static void wipe_string(char *text) {
    if (text) explicit_bzero(text, strlen(text));
}

static void cleanup_authtok(pam_handle_t *pamh, void *data, int error_status) {
    (void)pamh;
    (void)error_status;
    wipe_string(data);
    free(data);
}

static void cleanup_flag(pam_handle_t *pamh, void *data, int error_status) {
    (void)pamh;
    (void)error_status;
    free(data);
}

struct user {
    uid_t uid;
    gid_t gid;
    /* A group that owns nothing (nogroup): the tool's real group at its exec, so the kernel leaves it not
     * dumpable (see run_tool). Kept as the child's saved group, the one way the user may then pick it. */
    gid_t spare_gid;
    char name[256];
    char home[1024];
    char runtime[1024]; /* XDG_RUNTIME_DIR */
};

static int find_user(pam_handle_t *pamh, struct user *user) {
    const char *name = NULL;
    if (pam_get_user(pamh, &name, NULL) != PAM_SUCCESS || name == NULL) return -1;
    struct passwd entry, *found = NULL;
    char buffer[4096];
    if (getpwnam_r(name, &entry, buffer, sizeof buffer, &found) != 0 || found == NULL) return -1;
    if (found->pw_uid == 0) return -1; /* root's logins are left alone */
    user->uid = found->pw_uid;
    user->gid = found->pw_gid;
    if (snprintf(user->name, sizeof user->name, "%s", found->pw_name) >= (int)sizeof user->name) return -1;
    if (snprintf(user->home, sizeof user->home, "%s", found->pw_dir) >= (int)sizeof user->home) return -1;
    struct group group, *spare = NULL;
    char groups[4096];
    user->spare_gid = getgrnam_r("nogroup", &group, groups, sizeof groups, &spare) == 0 && spare ? spare->gr_gid : 65534;
    const char *runtime = pam_getenv(pamh, "XDG_RUNTIME_DIR");
    int written = runtime && runtime[0] == '/' ? snprintf(user->runtime, sizeof user->runtime, "%s", runtime)
                                               : snprintf(user->runtime, sizeof user->runtime, "/run/user/%u", (unsigned)user->uid);
    return written < (int)sizeof user->runtime ? 0 : -1;
}

/* ---- In the child, as the user: only system calls and the stack from here to the root parent's part. ---- */

/* Drops to the user. The saved group is the spare one, so that run_tool may make it the tool's real group
 * (an unprivileged process may set its real group only to one of its three); the child runs with the
 * user's real and effective groups all along. Changing the effective ids makes the child not dumpable
 * (fs.suid_dumpable is 0 or 2): the password it copied from the login process is out of the user's reach. */
static int become_user(const struct user *user) {
    if (getuid() == user->uid && geteuid() == user->uid) return 0; /* already the user: a screen locker */
    if (setgroups(1, &user->gid) != 0) return -1;
    if (setresgid(user->gid, user->gid, user->spare_gid) != 0) return -1;
    if (setresuid(user->uid, user->uid, user->uid) != 0) return -1;
    if (geteuid() != user->uid || getuid() != user->uid || getegid() != user->gid) return -1;
    return 0;
}

/* Closes every descriptor from `lowest` up (close_range; a loop where the kernel has none). */
static void close_from(int lowest) {
    if (syscall(SYS_close_range, (unsigned)lowest, ~0U, 0) == 0) return;
    long most = sysconf(_SC_OPEN_MAX);
    if (most < 0 || most > 65536) most = 65536;
    for (int fd = lowest; fd < most; fd++) close(fd);
}

/* The child keeps nothing of the login process's descriptors (a root-only file it holds open must not
 * reach the tool): 0-2 become /dev/null, `channel` becomes LK_CHANNEL_FD (close-on-exec), the rest closes. */
static int settle_descriptors(int channel, int key) {
    int moved = fcntl(channel, F_DUPFD_CLOEXEC, LK_CHANNEL_FD + 7); /* out of the way of 0-4 */
    int moved_key = key >= 0 ? fcntl(key, F_DUPFD_CLOEXEC, LK_CHANNEL_FD + 8) : -1;
    int null = open("/dev/null", O_RDWR); /* not close-on-exec: it may itself be 0, 1 or 2 */
    if (moved < 0 || null < 0 || (key >= 0 && moved_key < 0)) return -1;
    if (dup2(null, 0) != 0 || dup2(null, 1) != 1 || dup2(null, 2) != 2) return -1;
    if (dup3(moved, LK_CHANNEL_FD, O_CLOEXEC) != LK_CHANNEL_FD) return -1;
    if (key >= 0 && dup3(moved_key, LK_KEY_FD, O_CLOEXEC) != LK_KEY_FD) return -1;
    close_from(key >= 0 ? LK_KEY_FD + 1 : LK_CHANNEL_FD + 1);
    return 0;
}

static int write_all(int fd, const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    while (count > 0) {
        ssize_t written = send(fd, next, count, MSG_NOSIGNAL);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return -1;
        next += written;
        count -= (size_t)written;
    }
    return 0;
}

/* Receives up to `count` bytes and the pid of the process that sent them, which the kernel attaches
 * (SO_PASSCRED) and never joins across two senders; an unprivileged sender cannot name another process.
 * Descriptors passed along are closed. */
static ssize_t receive_from(int fd, void *bytes, size_t count, pid_t *sender) {
    union {
        char buffer[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr alignment;
    } control;
    struct iovec vector = {.iov_base = bytes, .iov_len = count};
    struct msghdr message;
    ssize_t got;
    do {
        memset(&message, 0, sizeof message);
        message.msg_iov = &vector;
        message.msg_iovlen = 1;
        message.msg_control = control.buffer;
        message.msg_controllen = sizeof control.buffer;
        got = recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    *sender = 0;
    if (got < 0) return got;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET) continue;
        if (header->cmsg_type == SCM_CREDENTIALS && header->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(header), sizeof credentials);
            *sender = credentials.pid;
        } else if (header->cmsg_type == SCM_RIGHTS) {
            size_t passed = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t index = 0; index < passed; index++) {
                int descriptor;
                memcpy(&descriptor, CMSG_DATA(header) + index * sizeof(int), sizeof descriptor);
                close(descriptor);
            }
        }
    }
    return got;
}

/* Reads exactly `count` bytes, all from one sender: `*sender` (0: whoever sends the first, then kept).
 * -1 when the connection broke off, -2 when another process sent some of them. */
static int read_all(int fd, void *bytes, size_t count, pid_t *sender) {
    unsigned char *next = bytes;
    while (count > 0) {
        pid_t from = 0;
        ssize_t got = receive_from(fd, next, count, &from);
        if (got <= 0) return -1;
        if (from <= 0 || (*sender != 0 && from != *sender)) return -2;
        *sender = from;
        next += got;
        count -= (size_t)got;
    }
    return 0;
}

static void put32le(unsigned char *at, uint32_t value) {
    at[0] = value & 0xff;
    at[1] = (value >> 8) & 0xff;
    at[2] = (value >> 16) & 0xff;
    at[3] = (value >> 24) & 0xff;
}

static uint32_t get32le(const unsigned char *at) {
    return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
}

/* One frame: reads its length and its body into `buffer` (at most `capacity` bytes), all from `*sender`
 * (see read_all); -1 or -2 as read_all. */
static int receive_frame(int fd, unsigned char *buffer, size_t capacity, size_t *length, pid_t *sender) {
    unsigned char header[4];
    int read = read_all(fd, header, 4, sender);
    if (read != 0) return read;
    uint32_t size = (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16 | (uint32_t)header[2] << 8 | header[3];
    if (size > capacity) return -1;
    read = read_all(fd, buffer, size, sender);
    if (read != 0) return read;
    *length = size;
    return 0;
}

/* The answer to a request: its status (0: success); -1 when the conversation broke off, -2 when a process
 * other than `sender` wrote some of it. */
#define LK_ANSWER_BROKEN (-1)
#define LK_ANSWER_IMPOSTOR (-2)

/* Sends one request (operation, one field) and returns the answer's status (see above). */
static int request(int fd, uint32_t id, unsigned char operation, const unsigned char *field, size_t field_length,
                   const unsigned char *second, size_t second_length, int has_second, pid_t sender) {
    size_t body = 2 + 1 + 4 + 1 + (field ? 4 + field_length : 0) + (has_second ? 4 + second_length : 0);
    unsigned char stack[4 + 2 + 1 + 4 + 1 + 4 + 1024 + 4 + 64];
    if (4 + body > sizeof stack) return LK_ANSWER_BROKEN;
    unsigned char *at = stack;
    at[0] = (body >> 24) & 0xff;
    at[1] = (body >> 16) & 0xff;
    at[2] = (body >> 8) & 0xff;
    at[3] = body & 0xff;
    at += 4;
    *at++ = 'L';
    *at++ = 'K';
    *at++ = LK_VERSION;
    put32le(at, id);
    at += 4;
    *at++ = operation;
    if (has_second) {
        put32le(at, (uint32_t)second_length);
        at += 4;
        memcpy(at, second, second_length);
        at += second_length;
    }
    if (field) {
        put32le(at, (uint32_t)field_length);
        at += 4;
        memcpy(at, field, field_length);
        at += field_length;
    }
    int sent = write_all(fd, stack, (size_t)(at - stack));
    explicit_bzero(stack, sizeof stack);
    if (sent != 0) return LK_ANSWER_BROKEN;
    unsigned char answer[4096];
    size_t length = 0;
    pid_t from = sender;
    int received = receive_frame(fd, answer, sizeof answer, &length, &from);
    if (received != 0) return received == -2 ? LK_ANSWER_IMPOSTOR : LK_ANSWER_BROKEN;
    if (length < 2 + 1 + 4 + 1 + 4 || answer[0] != 'L' || answer[1] != 'K' || answer[2] != LK_VERSION)
        return LK_ANSWER_BROKEN;
    int status = (int)(int32_t)get32le(answer + 8);
    /* The agent's statuses are negative (errSec…) or 0: a positive one cannot be told from our own codes. */
    return status > 0 ? LK_ANSWER_BROKEN : status;
}

/* Connects to the user's agent after checking its directory and socket, then its listener. Every message
 * received on it carries its sender's pid (SO_PASSCRED, set before connecting). */
static int connect_agent(const struct user *user, int *descriptor) {
    char directory[1100];
    snprintf(directory, sizeof directory, "%s/latchkey", user->runtime);
    /* Looked up without following any link (openat2's RESOLVE_NO_SYMLINKS), then checked and connected to
     * through the descriptors themselves: the child may be root here (the session step connects as root, so
     * the agent can tell the login's hand-over from any program of the user's), and a directory or socket
     * the user swaps for a link after the check must not take root's connection elsewhere. */
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    int folder = (int)syscall(SYS_openat2, AT_FDCWD, directory, &how, sizeof how);
    if (folder < 0) return errno == ELOOP ? OUTCOME_UNTRUSTED : OUTCOME_NO_AGENT;
    struct stat status;
    if (fstat(folder, &status) != 0 || !S_ISDIR(status.st_mode) || status.st_uid != user->uid ||
        (status.st_mode & 077) != 0) {
        close(folder);
        return OUTCOME_UNTRUSTED;
    }
    int node = openat(folder, "agent.sock", O_PATH | O_NOFOLLOW | O_CLOEXEC);
    close(folder);
    if (node < 0) return errno == ELOOP ? OUTCOME_UNTRUSTED : OUTCOME_NO_AGENT;
    if (fstat(node, &status) != 0 || !S_ISSOCK(status.st_mode) || status.st_uid != user->uid) {
        close(node);
        return OUTCOME_UNTRUSTED;
    }
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    snprintf(address.sun_path, sizeof address.sun_path, "/proc/self/fd/%d", node);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        close(node);
        return OUTCOME_BROKEN;
    }
    int on = 1;
    struct timeval timeout = {.tv_sec = LK_TIMEOUT_SECONDS, .tv_usec = 0};
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
        close(fd);
        close(node);
        return OUTCOME_BROKEN;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    int joined = connect(fd, (struct sockaddr *)&address, sizeof address);
    close(node);
    if (joined != 0) {
        close(fd);
        return OUTCOME_NO_AGENT;
    }
    struct ucred peer;
    socklen_t length = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || length != sizeof peer || peer.uid != user->uid) {
        close(fd);
        return OUTCOME_UNTRUSTED;
    }
    *descriptor = fd;
    return OUTCOME_DONE;
}

/* What the child asks its root parent: to vouch for process `pid`, the sender of what the child received on
 * the connection whose end here is socket inode `inode`. The parent answers one byte, 0 when it vouches. */
struct vouch_request {
    int32_t pid;
    uint32_t reserved;
    uint64_t inode;
};

static int parent_vouches(pid_t pid, int fd) {
    struct stat ours;
    if (fstat(fd, &ours) != 0) return 0;
    struct vouch_request ask = {.pid = pid, .reserved = 0, .inode = ours.st_ino};
    if (send(LK_CHANNEL_FD, &ask, sizeof ask, MSG_NOSIGNAL) != (ssize_t)sizeof ask) return 0;
    unsigned char verdict = 1;
    ssize_t got;
    do {
        got = recv(LK_CHANNEL_FD, &verdict, 1, 0);
    } while (got < 0 && errno == EINTR);
    return got == 1 && verdict == 0;
}

/* Whether nothing waits to be read on `fd`: what the agent writes later was written after the parent
 * vouched for it, by the process it vouched for (every byte's sender is checked). */
static int nothing_waits(int fd) {
    unsigned char byte;
    ssize_t waiting = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return waiting < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* The derived key from LK_KEY_FD, all LK_DERIVED_KEY_BYTES of it; -1 when the pipe ends before (the tool
 * wrote none). Blocking: the root parent's bound (child_seconds) and the child's alarm end a wait for a tool
 * the user stopped. */
static int read_key(unsigned char *key) {
    size_t got = 0;
    while (got < LK_DERIVED_KEY_BYTES) {
        ssize_t count = read(LK_KEY_FD, key + got, LK_DERIVED_KEY_BYTES - got);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) return -1;
        got += (size_t)count;
    }
    return 0;
}

/* The greeting, then hello (an empty keychain path: the keychain this agent serves), then `operation` with
 * `secret` — the password; the derived key (LK_OP_UNLOCK_DERIVED), read from LK_KEY_FD once the hello is
 * answered, so that the agent starts (a socket-activated one, by this very connection) while the derivation
 * ends; with neither, the unattended TPM unlock. Before the secret goes out, the root parent vouches for the
 * one process that wrote the greeting — and, after the hello's answer (written after that look, by that
 * process), once more: the genuine agent answered a hello it could only have read on a connection it
 * accepted itself, whose end no other process holds. */
static int unlock_agent(const struct user *user, unsigned char operation, const unsigned char *secret, size_t size) {
    int derived = operation == LK_OP_UNLOCK_DERIVED;
    int fd = -1;
    int connected = connect_agent(user, &fd);
    if (connected != OUTCOME_DONE) return connected;
    unsigned char greeting[64];
    size_t length = 0;
    pid_t agent = 0;
    int greeted = receive_frame(fd, greeting, sizeof greeting, &length, &agent);
    if (greeted != 0 || length != 4 + LK_CHALLENGE || greeting[0] != 'L' || greeting[1] != 'K' ||
        greeting[2] != LK_VERSION || greeting[3] != 'G') {
        close(fd);
        return greeted == -2 ? OUTCOME_NOT_VOUCHED : OUTCOME_BROKEN;
    }
    if ((secret != NULL || derived) && (!parent_vouches(agent, fd) || !nothing_waits(fd))) {
        close(fd);
        return OUTCOME_NOT_VOUCHED;
    }
    /* hello: path (empty), challenge — `request` writes the second field first. */
    int status = request(fd, 1, LK_OP_HELLO, greeting + 4, LK_CHALLENGE, (const unsigned char *)"", 0, 1, agent);
    if (status != 0) {
        close(fd);
        if (status == LK_ANSWER_IMPOSTOR) return OUTCOME_NOT_VOUCHED;
        return status == LK_ANSWER_BROKEN ? OUTCOME_BROKEN : OUTCOME_REFUSED;
    }
    if (secret == NULL && !derived) {
        /* No password: the keychain's unattended TPM unlock, if it has one. */
        status = request(fd, 2, LK_OP_UNLOCK_UNATTENDED, NULL, 0, NULL, 0, 0, agent);
        close(fd);
        if (status == 0) return OUTCOME_DONE;
        return status < 0 && status >= LK_ANSWER_IMPOSTOR ? OUTCOME_BROKEN : OUTCOME_REFUSED;
    }
    unsigned char key[LK_DERIVED_KEY_BYTES];
    if (derived) {
        if (read_key(key) != 0) {
            explicit_bzero(key, sizeof key);
            close(fd);
            return OUTCOME_NO_KEY;
        }
        secret = key;
        size = sizeof key;
    }
    if (size > 1024 || !parent_vouches(agent, fd)) {
        explicit_bzero(key, sizeof key);
        close(fd);
        return size > 1024 ? OUTCOME_REFUSED : OUTCOME_NOT_VOUCHED;
    }
    status = request(fd, 2, operation, secret, size, NULL, 0, 0, agent);
    explicit_bzero(key, sizeof key);
    close(fd);
    if (status == 0) return OUTCOME_DONE;
    if (status == LK_ERR_AUTH_FAILED) return OUTCOME_WRONG_PASSWORD;
    /* Held: a password. A waiting agent has no use for a key derived under a keychain it has not opened. */
    if (status == LK_ERR_NO_SUCH_KEYCHAIN) return operation == LK_OP_UNLOCK ? OUTCOME_HELD : OUTCOME_REFUSED;
    return status < 0 && status >= LK_ANSWER_IMPOSTOR ? OUTCOME_BROKEN : OUTCOME_REFUSED;
}

/* Unlocks with the password (NULL: the unattended unlock). */
static int unlock_with_password(const struct user *user, const char *password) {
    if (password == NULL) return unlock_agent(user, LK_OP_UNLOCK_UNATTENDED, NULL, 0);
    return unlock_agent(user, LK_OP_UNLOCK, (const unsigned char *)password, strlen(password));
}

static void keychain_directory(const struct user *user, char *out, size_t size) {
    snprintf(out, size, "%s/.local/share/latchkey", user->home);
}

static const char *latchkey_tool(const struct options *options) {
    if (options->latchkey) return options->latchkey;
    return access("/usr/local/bin/latchkey", X_OK) == 0 ? "/usr/local/bin/latchkey" : "/usr/bin/latchkey";
}

/* Puts `secret` in a pipe and makes its reading end descriptor `target` (the secret is far below a pipe's
 * capacity, so the write never blocks). Only this process, not dumpable, and the tool hold the pipe. */
static int secret_descriptor(const char *secret, int target) {
    int ends[2];
    if (pipe(ends) != 0) return -1;
    size_t size = strlen(secret);
    if (write(ends[1], secret, size) != (ssize_t)size || write(ends[1], "\n", 1) != 1) return -1;
    close(ends[1]);
    if (ends[0] != target) {
        if (dup2(ends[0], target) != target) return -1;
        close(ends[0]);
    }
    return 0;
}

/* Whether an exec that changes privilege leaves a process not dumpable: fs.suid_dumpable 0 or 2, not 1 (a
 * debugging setting under which such a process stays dumpable, and every setuid program with it). */
static int privileged_exec_not_dumpable(void) {
    int fd = open("/proc/sys/fs/suid_dumpable", O_RDONLY | O_CLOEXEC);
    char value = '1';
    if (fd >= 0) {
        if (read(fd, &value, 1) != 1) value = '1';
        close(fd);
    }
    return value == '0' || value == '2';
}

/* Runs the latchkey tool as the user (already become) with the secrets on descriptors 3 and 4 and no other
 * descriptor but 0-2 (/dev/null); returns its outcome. `first`/`second` may be NULL.
 *
 * The tool must not be dumpable at any moment it holds a secret, and execve makes a process dumpable
 * again — unless the exec changes privilege: an effective group other than the real one at exec (the
 * kernel's secureexec, also AT_SECURE) leaves it not dumpable from its first instruction, its /proc
 * entries root's. So the tool starts with the spare group as its real group; it takes its effective
 * group back as its real one first thing, which leaves it not dumpable. A child that was not started by
 * root has no spare group to give, and under fs.suid_dumpable 1 the exec would leave the tool dumpable:
 * neither runs a tool. */
static int run_tool(const struct user *user, unsigned seconds, const char *tool, const char *const *arguments,
                    const char *first, const char *second) {
    gid_t real, effective, saved;
    if (getresgid(&real, &effective, &saved) != 0 || saved != user->spare_gid || user->spare_gid == user->gid ||
        !privileged_exec_not_dumpable())
        return OUTCOME_SETUP;
    pid_t child = fork();
    if (child < 0) return OUTCOME_SETUP;
    if (child == 0) {
        alarm(seconds + LK_BACKSTOP_SECONDS); /* kept across execve: a backstop for the parent's bound */
        if (first && secret_descriptor(first, 3) != 0) _exit(OUTCOME_SETUP);
        if (second && secret_descriptor(second, 4) != 0) _exit(OUTCOME_SETUP);
        close_from(second ? 5 : first ? 4 : 3);
        char home[1100], runtime[1100], name[300], logname[300];
        snprintf(home, sizeof home, "HOME=%s", user->home);
        snprintf(runtime, sizeof runtime, "XDG_RUNTIME_DIR=%s", user->runtime);
        snprintf(name, sizeof name, "USER=%s", user->name);
        snprintf(logname, sizeof logname, "LOGNAME=%s", user->name);
        char *environment[] = {home, runtime, name, logname, "PATH=/usr/local/bin:/usr/bin:/bin", "NO_COLOR=1", NULL};
        if (setresgid(user->spare_gid, user->gid, user->gid) != 0) _exit(OUTCOME_SETUP);
        execve(tool, (char *const *)arguments, environment);
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status)) return OUTCOME_BROKEN;
    switch (WEXITSTATUS(status)) {
    case 0: return OUTCOME_DONE;
    case 51: return OUTCOME_WRONG_PASSWORD; /* errSecAuthFailed & 0xff: the tool's exit status */
    default: return OUTCOME_REFUSED;
    }
}

/* What a child does as the user. TASK_UNLOCK_DERIVED reads its key from LK_KEY_FD. */
enum task { TASK_UNLOCK, TASK_UNLOCK_DERIVED, TASK_CREATE, TASK_REWRAP, TASK_MARK, TASK_MARKED, TASK_UNMARK };

static void marker_path(const struct user *user, char *out, size_t size) {
    char directory[1100];
    keychain_directory(user, directory, sizeof directory);
    snprintf(out, size, "%s/.login-password-changed", directory);
}

static int child_task(const struct user *user, const struct options *options, enum task task, const char *old,
                      const char *new) {
    /* The hand-over to the agent runs as root where the module is root: the agent then knows it is the
     * login's (it never holds root's unlock back for other programs' wrong guesses, docs/LOGIN.md), and the
     * user cannot trace this child. It writes nothing into the user's paths, and connects only through
     * descriptors looked up without following links (connect_agent). Everything else runs as the user. */
    if (task == TASK_UNLOCK_DERIVED) {
        /* Only root's hand-over unlocks with a derived key; only a root module starts a derivation. */
        if (geteuid() != 0) return OUTCOME_SETUP;
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        return unlock_agent(user, LK_OP_UNLOCK_DERIVED, NULL, 0);
    }
    if (task == TASK_UNLOCK && geteuid() == 0) {
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        return unlock_with_password(user, new);
    }
    if (become_user(user) != 0) return OUTCOME_SETUP;
    /* Already so (become_user changed the effective ids); said again for a child that was the user. */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    const char *tool = latchkey_tool(options);
    char directory[1100], keychain[1200], marker[1200];
    keychain_directory(user, directory, sizeof directory);
    snprintf(keychain, sizeof keychain, "%s/login.keychain", directory);
    marker_path(user, marker, sizeof marker);
    switch (task) {
    case TASK_UNLOCK: return unlock_with_password(user, new);
    case TASK_UNLOCK_DERIVED: return OUTCOME_SETUP; /* answered above */
    case TASK_CREATE: {
        struct stat status;
        if (lstat(keychain, &status) == 0) return OUTCOME_EXISTS;
        const char *arguments[] = {tool, "create-keychain", "--passphrase-fd", "3", NULL};
        return run_tool(user, options->child_seconds, tool, arguments, new, NULL);
    }
    case TASK_REWRAP: {
        struct stat status;
        if (lstat(keychain, &status) != 0) return OUTCOME_NO_KEYCHAIN;
        const char *arguments[] = {tool, "set-keychain-password", "--passphrase-fd", "3", "--new-passphrase-fd", "4", NULL};
        return run_tool(user, options->child_seconds, tool, arguments, old, new);
    }
    case TASK_MARK: {
        struct stat status;
        if (lstat(keychain, &status) != 0) return OUTCOME_NO_KEYCHAIN;
        int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) return OUTCOME_REFUSED;
        close(fd);
        return OUTCOME_DONE;
    }
    case TASK_MARKED: {
        struct stat status;
        return lstat(marker, &status) == 0 && S_ISREG(status.st_mode) ? OUTCOME_DONE : OUTCOME_NO_KEYCHAIN;
    }
    case TASK_UNMARK: return unlink(marker) == 0 || errno == ENOENT ? OUTCOME_DONE : OUTCOME_REFUSED;
    }
    return OUTCOME_SETUP;
}

/* The forked child: a session of its own (so the root parent can end it and whatever it runs at once),
 * none of the login process's descriptors, then the task as the user. */
static int child_main(const struct user *user, const struct options *options, enum task task, const char *old,
                      const char *new, int channel, int key) {
    if (setsid() < 0 || settle_descriptors(channel, key) != 0) return OUTCOME_SETUP;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGALRM, SIG_DFL);
    alarm(options->child_seconds + LK_BACKSTOP_SECONDS); /* a backstop: the parent ends it at child_seconds */
    return child_task(user, options, task, old, new);
}

/* ---- In the root parent (the login process): vouching for the agent, bounding the child. ---- */

static const char *latchkey_agent(const struct options *options) {
    if (options->latchkeyd) return options->latchkeyd;
    return access("/usr/local/bin/latchkeyd", X_OK) == 0 ? "/usr/local/bin/latchkeyd" : "/usr/bin/latchkeyd";
}

/* Root's, and nobody else may write it: a file (or directory) that the user cannot replace or change. */
static int roots_alone(const struct stat *status) {
    if (status->st_uid != 0) return 0;
    if (S_ISDIR(status->st_mode) && (status->st_mode & S_ISVTX)) return 1; /* /tmp: others cannot replace root's entries */
    return (status->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* The configured agent: an absolute path to a regular file of root's in directories only root may change
 * (else a user could put another program there, and the check of the agent's executable would mean nothing). */
static int trusted_agent(const char *path, struct stat *agent) {
    if (path[0] != '/' || strlen(path) >= 1024) return 0;
    if (stat(path, agent) != 0 || !S_ISREG(agent->st_mode) || !roots_alone(agent)) return 0;
    char prefix[1024];
    for (const char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        size_t size = (size_t)(slash - path);
        memcpy(prefix, path, size);
        prefix[size] = '\0';
        struct stat directory;
        if (stat(prefix, &directory) != 0 || !S_ISDIR(directory.st_mode) || !roots_alone(&directory)) return 0;
    }
    struct stat top;
    return stat("/", &top) == 0 && roots_alone(&top);
}

/* The other end of the connection whose end here is socket inode `ours` (NETLINK_SOCK_DIAG, UDIAG_SHOW_PEER). */
static int peer_inode(uint64_t ours, uint32_t *peer) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -1;
    struct {
        struct nlmsghdr header;
        struct unix_diag_req request;
    } ask;
    memset(&ask, 0, sizeof ask);
    ask.header.nlmsg_len = sizeof ask;
    ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    ask.header.nlmsg_flags = NLM_F_REQUEST;
    ask.request.sdiag_family = AF_UNIX;
    ask.request.udiag_states = ~0U;
    ask.request.udiag_ino = (uint32_t)ours;
    ask.request.udiag_show = UDIAG_SHOW_PEER;
    ask.request.udiag_cookie[0] = ask.request.udiag_cookie[1] = ~0U; /* INET_DIAG_NOCOOKIE */
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    union {
        char bytes[8192];
        struct nlmsghdr alignment;
    } answer;
    ssize_t got = -1;
    if (sendto(fd, &ask, sizeof ask, 0, (struct sockaddr *)&kernel, sizeof kernel) == (ssize_t)sizeof ask) {
        do {
            got = recv(fd, answer.bytes, sizeof answer.bytes, 0);
        } while (got < 0 && errno == EINTR);
    }
    close(fd);
    if (ours > UINT32_MAX || got <= 0) return -1;
    size_t left = (size_t)got;
    for (struct nlmsghdr *header = &answer.alignment; NLMSG_OK(header, left); header = NLMSG_NEXT(header, left)) {
        if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY || header->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
            return -1;
        struct unix_diag_msg *message = NLMSG_DATA(header);
        if (message->udiag_ino != (uint32_t)ours) return -1;
        int attributes = (int)(header->nlmsg_len - NLMSG_LENGTH(sizeof *message));
        for (struct rtattr *attribute = (struct rtattr *)(message + 1); RTA_OK(attribute, attributes);
             attribute = RTA_NEXT(attribute, attributes)) {
            if (attribute->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(attribute) >= sizeof(uint32_t)) {
                memcpy(peer, RTA_DATA(attribute), sizeof *peer);
                return 0;
            }
        }
        return -1;
    }
    return -1;
}

/* Reads a small file of /proc/<pid> (`at`: its directory) into `buffer`, NUL-terminated. */
static int read_proc(int at, const char *name, char *buffer, size_t size) {
    int fd = openat(at, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t total = 0;
    while (total + 1 < size) {
        ssize_t got = read(fd, buffer + total, size - 1 - total);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        total += (size_t)got;
    }
    close(fd);
    buffer[total] = '\0';
    return total > 0 ? 0 : -1;
}

/* The number after `field` ("TracerPid:") in a status file; -1 when absent. */
static long status_field(const char *status, const char *field) {
    const char *at = strstr(status, field);
    return at ? strtol(at + strlen(field), NULL, 10) : -1;
}

/* Whether every thread of the process (`at`: its /proc directory) runs as `uid` and none is traced. */
static int untraced_user(int at, uid_t uid) {
    char status[4096];
    if (read_proc(at, "status", status, sizeof status) != 0) return 0;
    unsigned ids[4];
    const char *line = strstr(status, "\nUid:");
    if (!line || sscanf(line + 5, "%u %u %u %u", &ids[0], &ids[1], &ids[2], &ids[3]) != 4) return 0;
    for (int i = 0; i < 4; i++)
        if (ids[i] != uid) return 0;
    int tasks = openat(at, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *list = tasks >= 0 ? fdopendir(tasks) : NULL;
    if (!list) {
        if (tasks >= 0) close(tasks);
        return 0;
    }
    int clean = 1, seen = 0;
    for (struct dirent *entry; clean && (entry = readdir(list));) {
        if (entry->d_name[0] == '.') continue;
        char path[300];
        snprintf(path, sizeof path, "%s/status", entry->d_name);
        /* A thread that ended meanwhile is no tracer's. */
        if (read_proc(dirfd(list), path, status, sizeof status) != 0) continue;
        seen++;
        clean = status_field(status, "\nTracerPid:") == 0;
    }
    closedir(list);
    return clean && seen > 0;
}

/* Whether one of the process's descriptors is socket `inode`. */
static int holds_socket(int at, uint32_t inode) {
    int fds = openat(at, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *list = fds >= 0 ? fdopendir(fds) : NULL;
    if (!list) {
        if (fds >= 0) close(fds);
        return 0;
    }
    char wanted[64], target[64];
    snprintf(wanted, sizeof wanted, "socket:[%u]", inode);
    int found = 0;
    for (struct dirent *entry; !found && (entry = readdir(list));) {
        ssize_t size = readlinkat(dirfd(list), entry->d_name, target, sizeof target - 1);
        if (size <= 0) continue;
        target[size] = '\0';
        found = strcmp(target, wanted) == 0;
    }
    closedir(list);
    return found;
}

/* Whether every file the process maps as code or privately — its executable, the loader, every library:
 * whatever decides what it runs — is root's and only root may write it; the first that is not goes in
 * `which`. A file mapped shared and not executable is data the process reads and writes, like any file it
 * opens (the agent's SQLite maps the keychain's WAL index, the user's own file). The files are looked at
 * through map_files: the very inodes, whatever mount namespace the process sees them in. */
static int maps_roots_files(int at, char *which, size_t size) {
    int maps = openat(at, "maps", O_RDONLY | O_CLOEXEC);
    int files = openat(at, "map_files", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    FILE *list = maps >= 0 && files >= 0 ? fdopen(maps, "r") : NULL;
    if (!list) {
        if (maps >= 0) close(maps);
        if (files >= 0) close(files);
        snprintf(which, size, "(its mappings cannot be read)");
        return 0;
    }
    char line[4400];
    int clean = 1, seen = 0;
    while (clean && fgets(line, sizeof line, list)) {
        char range[64], permissions[8];
        unsigned long long inode = 0;
        if (sscanf(line, "%63s %7s %*s %*s %llu", range, permissions, &inode) != 3 || strlen(permissions) != 4) {
            clean = 0;
            snprintf(which, size, "(a line of its maps cannot be read)");
            break;
        }
        if (inode == 0 || (permissions[2] != 'x' && permissions[3] != 'p')) continue;
        seen++;
        struct stat status;
        if (fstatat(files, range, &status, 0) != 0) {
            if (errno == ENOENT) continue; /* unmapped meanwhile */
            clean = 0;
        } else {
            clean = roots_alone(&status);
        }
        if (!clean) {
            ssize_t length = readlinkat(files, range, which, size - 1);
            which[length > 0 ? length : 0] = '\0';
        }
    }
    fclose(list);
    close(files);
    return clean && seen > 0;
}

/* The root parent's one look at the agent a child is talking to. */
struct agent_pin {
    pid_t pid;   /* the process the child asked about first; later questions must name it too */
    int pidfd;   /* pins that process: while it lives, `pid` is its */
    int refused; /* said once */
};

static int pidfd_alive(int pidfd) { return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0; }

/* Whether the process `pin` names is an agent this module vouches for, on the connection whose end in the
 * child is `ours`; when not, `why` says why. Run with root's view: a child acting as the user could not
 * read a non-dumpable agent's /proc. Nothing is written anywhere. */
static int vouch(const struct user *user, const struct options *options, const struct agent_pin *pin, uint64_t ours,
                 char *why, size_t size) {
    const char *path = latchkey_agent(options);
    struct stat agent, exe, status;
    char proc[64], target[1024] = "";
    uint32_t peer = 0;
    if (!trusted_agent(path, &agent)) {
        snprintf(why, size, "the configured agent %s is not a file of root's that only root may replace", path);
        return 0;
    }
    snprintf(proc, sizeof proc, "/proc/%d", (int)pin->pid);
    int at = pin->pidfd >= 0 && pidfd_alive(pin->pidfd) ? open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    /* Alive after the directory was opened: the directory is the pinned process's, not a reused pid's. */
    if (at < 0 || !pidfd_alive(pin->pidfd)) {
        if (at >= 0) close(at);
        snprintf(why, size, "it ended");
        return 0;
    }
    ssize_t length = readlinkat(at, "exe", target, sizeof target - 1);
    target[length > 0 ? length : 0] = '\0';
    int vouched = 0;
    if (fstatat(at, "exe", &exe, 0) != 0 || exe.st_dev != agent.st_dev || exe.st_ino != agent.st_ino)
        snprintf(why, size, "it runs %s, not %s", target[0] ? target : "(unknown)", path);
    else if (!untraced_user(at, user->uid))
        snprintf(why, size, "it is traced, or does not run as %s", user->name);
    else if (fstatat(at, "status", &status, 0) != 0 || status.st_uid != 0)
        snprintf(why, size, "it is dumpable: the user's programs can read and write its memory");
    else if (!maps_roots_files(at, target, sizeof target))
        snprintf(why, size, "it maps %s, which is not root's alone", target);
    else if (peer_inode(ours, &peer) != 0 || !holds_socket(at, peer))
        snprintf(why, size, "it does not hold the other end of the connection");
    else if (!pidfd_alive(pin->pidfd))
        snprintf(why, size, "it ended");
    else
        vouched = 1;
    close(at);
    return vouched;
}

/* Answers one question of the child on `channel` (a vouch_request): 0 when the module vouches. */
static void answer_child(pam_handle_t *pamh, const struct user *user, const struct options *options, int channel,
                         struct agent_pin *pin, int *open_channel) {
    struct vouch_request ask;
    ssize_t got = recv(channel, &ask, sizeof ask, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0) {
        *open_channel = 0; /* the child ended */
        return;
    }
    unsigned char verdict = 1;
    char why[1200] = "";
    if (geteuid() != 0) {
        /* Run by a program of the user (a screen locker): the password already sits in a process of the user,
         * and this one cannot look at a non-dumpable agent. */
        verdict = 0;
    } else if (got == (ssize_t)sizeof ask && ask.pid > 0 && (pin->pidfd < 0 || ask.pid == pin->pid)) {
        if (pin->pidfd < 0) {
            pin->pid = ask.pid;
            pin->pidfd = (int)syscall(SYS_pidfd_open, ask.pid, 0);
        }
        verdict = vouch(user, options, pin, ask.inode, why, sizeof why) ? 0 : 1;
    } else {
        snprintf(why, sizeof why, "it is not the process that answered first");
    }
    if (verdict != 0 && !pin->refused) {
        pin->refused = 1;
        pam_syslog(pamh, LOG_NOTICE,
                   "the process that answers on the agent's socket of %s (pid %d) is not an agent this module vouches "
                   "for: %s; the password was not sent",
                   user->name, (int)(got == (ssize_t)sizeof ask ? ask.pid : 0), why);
    }
    if (send(channel, &verdict, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) *open_channel = 0;
}

static long elapsed_ms(const struct timespec *since) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* Waits for the child — answering its questions — at most child_seconds, then kills it; in every case kills
 * what is left of its session (a tool it ran that was stopped) before reaping it, while its pid, which names
 * that session's process group, is still its own. A child the user stopped cannot hold the login: the
 * bound is the parent's, not a signal the stopped child would have to take. */
static int supervise(pam_handle_t *pamh, const struct user *user, const struct options *options, pid_t child,
                     int channel) {
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    long bound = (long)options->child_seconds * 1000;
    int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    int open_channel = 1, timed_out = 0;
    struct agent_pin pin = {.pid = 0, .pidfd = -1, .refused = 0};
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_PID, (id_t)child, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == child) break;
        long left = bound - elapsed_ms(&started);
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        /* Without a pidfd (before Linux 5.3) the child's end is polled for every 20 ms. */
        struct pollfd polls[2] = {{.fd = open_channel ? channel : -1, .events = POLLIN, .revents = 0},
                                  {.fd = pidfd, .events = POLLIN, .revents = 0}};
        int ready = poll(polls, 2, pidfd >= 0 ? (int)left : (int)(left < 20 ? left : 20));
        if (ready > 0 && polls[0].revents) answer_child(pamh, user, options, channel, &pin, &open_channel);
    }
    kill(-child, SIGKILL);
    if (timed_out) kill(child, SIGKILL);
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(child, &status, 0)) < 0 && errno == EINTR) {}
    if (pidfd >= 0) close(pidfd);
    if (pin.pidfd >= 0) close(pin.pidfd);
    if (timed_out) {
        pam_syslog(pamh, LOG_NOTICE, "the child acting as %s did not end within %u s (child_seconds): killed it and what it runs",
                   user->name, options->child_seconds);
        return OUTCOME_TIMEOUT;
    }
    if (waited != child || !WIFEXITED(status)) return OUTCOME_BROKEN;
    return WEXITSTATUS(status);
}

/* Runs `task` in a forked child as the user (the caller may be root, or the user already); `key`, when not
 * -1, is the derived key's pipe, which the child gets as LK_KEY_FD. */
static int as_user_keyed(pam_handle_t *pamh, const struct user *user, const struct options *options, enum task task,
                         const char *old, const char *new, int key) {
    struct sigaction ignore, previous;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_DFL;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGCHLD, &ignore, &previous); /* waitpid must see our child, whatever the program set */
    int channel[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel) != 0) {
        sigaction(SIGCHLD, &previous, NULL);
        pam_syslog(pamh, LOG_ERR, "cannot make a channel to the child: %s", strerror(errno));
        return OUTCOME_SETUP;
    }
    pid_t child = fork();
    if (child < 0) {
        close(channel[0]);
        close(channel[1]);
        sigaction(SIGCHLD, &previous, NULL);
        pam_syslog(pamh, LOG_ERR, "cannot fork: %s", strerror(errno));
        return OUTCOME_SETUP;
    }
    if (child == 0) _exit(child_main(user, options, task, old, new, channel[1], key));
    close(channel[1]);
    int outcome = supervise(pamh, user, options, child, channel[0]);
    close(channel[0]);
    sigaction(SIGCHLD, &previous, NULL);
    return outcome;
}

static int as_user(pam_handle_t *pamh, const struct user *user, const struct options *options, enum task task,
                   const char *old, const char *new) {
    return as_user_keyed(pamh, user, options, task, old, new, -1);
}

/* ---- The derivation started at the auth step (docs/LOGIN.md, "The derivation starts at the auth step"). ---- */

/* A derivation running: the tool writes the derived key to `pipe` and ends. Kept with pam_set_data from the
 * auth step to the session step, which reads the key; its cleanup ends the tool (through its pidfd, whatever
 * became of its pid) and closes both descriptors, so a login that stops before its session holds nothing. */
struct early_derivation {
    int pipe;
    int pidfd;
};

static void cleanup_early(pam_handle_t *pamh, void *data, int error_status) {
    (void)pamh;
    (void)error_status;
    struct early_derivation *early = data;
    if (early == NULL) return;
    if (early->pidfd >= 0) {
        syscall(SYS_pidfd_send_signal, early->pidfd, SIGKILL, NULL, 0);
        close(early->pidfd);
    }
    if (early->pipe >= 0) close(early->pipe);
    free(early);
}

/* The tool's process, before its exec: a session of its own, none of the login process's descriptors, the
 * password on descriptor 3 and the key's pipe on 4, the user's ids with the spare group as the real one (so
 * the exec leaves it not dumpable, as run_tool's), and the same backstop alarm. Returns only on a failure. */
static int exec_derivation(const struct user *user, const struct options *options, const char *password, int out) {
    if (setsid() < 0) return OUTCOME_SETUP;
    signal(SIGPIPE, SIG_DFL);
    signal(SIGALRM, SIG_DFL);
    alarm(options->child_seconds + LK_BACKSTOP_SECONDS);
    int moved = fcntl(out, F_DUPFD, 10); /* out of the way of 0-4 */
    int null = open("/dev/null", O_RDWR);
    if (moved < 0 || null < 0) return OUTCOME_SETUP;
    if (dup2(null, 0) != 0 || dup2(null, 1) != 1 || dup2(null, 2) != 2) return OUTCOME_SETUP;
    if (null > 2) close(null);
    if (secret_descriptor(password, 3) != 0 || dup2(moved, 4) != 4) return OUTCOME_SETUP;
    close_from(5);
    if (become_user(user) != 0) return OUTCOME_SETUP;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    const char *tool = latchkey_tool(options);
    char home[1100], name[300], logname[300];
    snprintf(home, sizeof home, "HOME=%s", user->home);
    snprintf(name, sizeof name, "USER=%s", user->name);
    snprintf(logname, sizeof logname, "LOGNAME=%s", user->name);
    char *environment[] = {home, name, logname, "PATH=/usr/local/bin:/usr/bin:/bin", "NO_COLOR=1", NULL};
    const char *arguments[] = {tool, "unlock-keychain", "--passphrase-fd", "3", "--derived-key-fd", "4", NULL};
    if (setresgid(user->spare_gid, user->gid, user->gid) != 0) return OUTCOME_SETUP;
    execve(tool, (char *const *)arguments, environment);
    return 127;
}

/* One byte and room for one descriptor: what send_descriptor and receive_descriptor exchange. */
struct descriptor_message {
    char byte;
    struct iovec part;
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    struct msghdr message;
};

static void prepare_descriptor_message(struct descriptor_message *m) {
    memset(m, 0, sizeof *m);
    m->part.iov_base = &m->byte;
    m->part.iov_len = 1;
    m->message.msg_iov = &m->part;
    m->message.msg_iovlen = 1;
    m->message.msg_control = m->control.bytes;
    m->message.msg_controllen = sizeof m->control.bytes;
}

/* Sends descriptor `fd` over socket `channel` (SCM_RIGHTS). */
static int send_descriptor(int channel, int fd) {
    struct descriptor_message m;
    prepare_descriptor_message(&m);
    struct cmsghdr *header = CMSG_FIRSTHDR(&m.message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &fd, sizeof(int));
    return sendmsg(channel, &m.message, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* The descriptor sent over `channel`, close-on-exec; -1 when none came. */
static int receive_descriptor(int channel) {
    struct descriptor_message m;
    prepare_descriptor_message(&m);
    ssize_t got;
    do {
        got = recvmsg(channel, &m.message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    } while (got < 0 && errno == EINTR);
    struct cmsghdr *header = got == 1 ? CMSG_FIRSTHDR(&m.message) : NULL;
    if (header == NULL || header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS ||
        header->cmsg_len != CMSG_LEN(sizeof(int)))
        return -1;
    int fd = -1;
    memcpy(&fd, CMSG_DATA(header), sizeof(int));
    return fd;
}

/* At the auth step of a root login whose agent does not answer yet: starts the tool deriving the key from
 * `password`, and returns at once. The tool is a grandchild: a middle child forks it, sends its pidfd here
 * (taken while the tool is the middle child's own, so it names that process whatever becomes of the pid)
 * and ends, so the login process keeps no child of its own between its PAM calls (the program may reap any
 * child it has). Nothing is started without a keychain to derive for, or where run_tool would not run. */
static void start_early_derivation(pam_handle_t *pamh, const struct user *user, const struct options *options,
                                   const char *password) {
    char directory[1100], keychain[1200];
    keychain_directory(user, directory, sizeof directory);
    snprintf(keychain, sizeof keychain, "%s/login.keychain", directory);
    struct stat status;
    if (geteuid() != 0 || user->spare_gid == user->gid || !privileged_exec_not_dumpable() ||
        lstat(keychain, &status) != 0 || !S_ISREG(status.st_mode) || status.st_uid != user->uid)
        return;
    int result[2], transfer[2];
    if (pipe2(result, O_CLOEXEC) != 0) return;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, transfer) != 0) {
        close(result[0]);
        close(result[1]);
        return;
    }
    struct sigaction ignore, previous;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_DFL;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGCHLD, &ignore, &previous); /* waitpid must see the middle child, whatever the program set */
    pid_t middle = fork();
    if (middle == 0) {
        close(result[0]);
        close(transfer[0]);
        pid_t tool = fork();
        if (tool == 0) _exit(exec_derivation(user, options, password, result[1]));
        int pidfd = tool > 0 ? (int)syscall(SYS_pidfd_open, tool, 0) : -1;
        if (pidfd < 0 || send_descriptor(transfer[1], pidfd) != 0) {
            if (tool > 0) kill(tool, SIGKILL); /* still this child's: the pid is the tool's */
            _exit(1);
        }
        _exit(0);
    }
    close(result[1]);
    close(transfer[1]);
    int pidfd = -1, status_code = 0;
    if (middle > 0) {
        pid_t waited;
        while ((waited = waitpid(middle, &status_code, 0)) < 0 && errno == EINTR) {}
        if (waited == middle && WIFEXITED(status_code) && WEXITSTATUS(status_code) == 0)
            pidfd = receive_descriptor(transfer[0]);
    }
    close(transfer[0]);
    sigaction(SIGCHLD, &previous, NULL);
    struct early_derivation *early = pidfd >= 0 ? malloc(sizeof *early) : NULL;
    if (early == NULL) {
        if (pidfd >= 0) {
            syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
            close(pidfd);
        }
        close(result[0]);
        if (options->debug) pam_syslog(pamh, LOG_DEBUG, "auth: could not start the key derivation");
        return;
    }
    early->pipe = result[0];
    early->pidfd = pidfd;
    if (pam_set_data(pamh, early_key, early, cleanup_early) != PAM_SUCCESS) {
        cleanup_early(pamh, early, 0);
        return;
    }
    if (options->debug) pam_syslog(pamh, LOG_DEBUG, "auth: started deriving the keychain's key of %s", user->name);
}

static const char *describe(int outcome) {
    switch (outcome) {
    case OUTCOME_DONE: return "done";
    case OUTCOME_NO_AGENT: return "no agent answers on the user's socket";
    case OUTCOME_UNTRUSTED: return "the agent's socket, its directory or its listener does not belong to the user; nothing was sent";
    case OUTCOME_WRONG_PASSWORD: return "the password does not unlock the keychain";
    case OUTCOME_REFUSED: return "refused";
    case OUTCOME_BROKEN: return "the conversation with the agent broke off";
    case OUTCOME_NO_KEYCHAIN: return "the user has no login keychain";
    case OUTCOME_EXISTS: return "the keychain already exists";
    case OUTCOME_HELD: return "the agent holds the password until the keychain appears";
    case OUTCOME_NOT_VOUCHED:
        return "the process that answers on the agent's socket is not an agent this module vouches for; the password was not sent";
    case OUTCOME_TIMEOUT: return "the child acting as the user did not end in time";
    case OUTCOME_NO_KEY: return "the key derivation started at the auth step gave no key";
    default: return "cannot act as the user";
    }
}

/* The password `auth` kept. (Not PAM_AUTHTOK: libpam wipes it when pam_authenticate returns, so the
 * session step has only what the auth step put aside.) */
static const char *kept_password(pam_handle_t *pamh) {
    const void *data = NULL;
    if (pam_get_data(pamh, data_key, &data) == PAM_SUCCESS && data != NULL) return data;
    return NULL;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    struct options options;
    parse_options(argc, argv, &options);
    if (!service_allowed(pamh, &options)) return PAM_IGNORE;
    const void *item = NULL;
    if (pam_get_item(pamh, PAM_AUTHTOK, &item) != PAM_SUCCESS || item == NULL) return PAM_IGNORE;
    char *copy = strdup(item);
    if (copy == NULL) return PAM_IGNORE;
    if (pam_set_data(pamh, data_key, copy, cleanup_authtok) != PAM_SUCCESS) {
        cleanup_authtok(pamh, copy, 0);
        return PAM_IGNORE;
    }
    struct user user;
    if (find_user(pamh, &user) != 0) return PAM_IGNORE;
    /* A screen locker's stack: the agent runs, so unlock now (no session step follows). */
    int outcome = as_user(pamh, &user, &options, TASK_UNLOCK, NULL, copy);
    if (outcome == OUTCOME_DONE) {
        int *flag = malloc(sizeof *flag);
        if (flag && pam_set_data(pamh, unlocked_key, flag, cleanup_flag) != PAM_SUCCESS) free(flag);
        pam_syslog(pamh, LOG_INFO, "unlocked the keychain of %s", user.name);
    } else if (outcome == OUTCOME_HELD) {
        pam_syslog(pamh, LOG_INFO, "the keychain of %s: %s", user.name, describe(outcome));
    } else {
        if (options.debug) pam_syslog(pamh, LOG_DEBUG, "auth: not unlocked now: %s", describe(outcome));
        /* A login: the agent comes with the session. Its key derivation need not wait for it. */
        if (outcome == OUTCOME_NO_AGENT) start_early_derivation(pamh, &user, &options, copy);
    }
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_IGNORE;
}

/* After a root-initiated password change: asks for the old keychain password once and re-wraps. */
static int rewrap_after_root_change(pam_handle_t *pamh, const struct user *user, const struct options *options,
                                    const char *password) {
    if (as_user(pamh, user, options, TASK_MARKED, NULL, NULL) != OUTCOME_DONE) return 0;
    char *old = NULL;
    int asked = pam_prompt(pamh, PAM_PROMPT_ECHO_OFF, &old,
                           "Your login password was changed; the keychain's previous password: ");
    if (asked != PAM_SUCCESS || old == NULL) {
        pam_syslog(pamh, LOG_NOTICE, "the keychain of %s stays locked: no previous password was given", user->name);
        return 0;
    }
    int outcome = as_user(pamh, user, options, TASK_REWRAP, old, password);
    wipe_string(old);
    free(old);
    if (outcome != OUTCOME_DONE) {
        pam_syslog(pamh, LOG_NOTICE, "cannot re-wrap the keychain of %s: %s", user->name, describe(outcome));
        pam_error(pamh, "Latchkey: that is not the keychain's previous password; the keychain stays locked.");
        return 0;
    }
    as_user(pamh, user, options, TASK_UNMARK, NULL, NULL);
    pam_syslog(pamh, LOG_INFO, "re-wrapped the keychain of %s for the new login password", user->name);
    return 1;
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    struct options options;
    parse_options(argc, argv, &options);
    if (!service_allowed(pamh, &options)) return PAM_IGNORE;
    struct user user;
    if (find_user(pamh, &user) != 0) return PAM_IGNORE;
    const void *done = NULL;
    if (pam_get_data(pamh, unlocked_key, &done) == PAM_SUCCESS && done != NULL) return PAM_SUCCESS;
    const char *password = kept_password(pamh);
    if (password == NULL || password[0] == '\0') {
        /* Autologin, a fingerprint, a FIDO2 key: the keychain's unattended TPM unlock when it is enrolled. */
        int unattended = as_user(pamh, &user, &options, TASK_UNLOCK, NULL, NULL);
        if (unattended == OUTCOME_DONE) {
            pam_syslog(pamh, LOG_INFO, "unlocked the keychain of %s through the TPM (the login gave no password)", user.name);
            return PAM_SUCCESS;
        }
        pam_syslog(pamh, LOG_NOTICE, "the login of %s gave no password: the keychain stays locked (%s)", user.name, describe(unattended));
        pam_info(pamh, "Latchkey: this login gave no password, so your keychain stays locked; "
                       "unlock it with `latchkey unlock-keychain`.");
        return PAM_SUCCESS;
    }
    if (options.create) {
        int created = as_user(pamh, &user, &options, TASK_CREATE, NULL, password);
        if (created == OUTCOME_DONE) pam_syslog(pamh, LOG_INFO, "created the login keychain of %s", user.name);
        else if (created != OUTCOME_EXISTS)
            pam_syslog(pamh, LOG_ERR, "cannot create the login keychain of %s: %s", user.name, describe(created));
    }
    /* The key the auth step started deriving: the child connects (starting a socket-activated agent), greets,
     * and reads the key once the hello is answered. Else, or when the key does not do (none came: not the
     * keychain's password; the password changed since; an agent older than the request), the password. An
     * agent that was not there, or not vouched for, would meet the password the same way: that answer stands. */
    const void *early = NULL;
    int with_key = pam_get_data(pamh, early_key, &early) == PAM_SUCCESS && early != NULL;
    int outcome = OUTCOME_REFUSED;
    if (with_key) {
        outcome = as_user_keyed(pamh, &user, &options, TASK_UNLOCK_DERIVED, NULL, NULL,
                                ((const struct early_derivation *)early)->pipe);
        pam_set_data(pamh, early_key, NULL, NULL); /* cleanup_early: the tool ended, its descriptors closed */
        if (outcome != OUTCOME_DONE && options.debug)
            pam_syslog(pamh, LOG_DEBUG, "session: the key derived at the auth step did not unlock (%s)", describe(outcome));
        if (outcome != OUTCOME_DONE && outcome != OUTCOME_NO_AGENT && outcome != OUTCOME_UNTRUSTED &&
            outcome != OUTCOME_NOT_VOUCHED)
            with_key = 0;
    }
    if (!with_key) outcome = as_user(pamh, &user, &options, TASK_UNLOCK, NULL, password);
    if (outcome == OUTCOME_WRONG_PASSWORD && rewrap_after_root_change(pamh, &user, &options, password))
        outcome = as_user(pamh, &user, &options, TASK_UNLOCK, NULL, password);
    if (outcome == OUTCOME_DONE)
        pam_syslog(pamh, LOG_INFO, "unlocked the keychain of %s%s", user.name,
                   with_key ? " (with the key derived at the auth step)" : "");
    else if (outcome == OUTCOME_HELD) pam_syslog(pamh, LOG_INFO, "the keychain of %s: %s", user.name, describe(outcome));
    else pam_syslog(pamh, LOG_NOTICE, "the keychain of %s stays locked: %s", user.name, describe(outcome));
    /* The password is not needed any more: its copy is wiped now, not at pam_end. */
    pam_set_data(pamh, data_key, NULL, NULL);
    return PAM_SUCCESS;
}

/* Nothing to do: the agent keeps the keychain unlocked for the user's other sessions, and locks it on its
 * own settings (idle, sleep, the session's screen lock). */
PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    struct options options;
    parse_options(argc, argv, &options);
    if (!(flags & PAM_UPDATE_AUTHTOK) || !service_allowed(pamh, &options)) return PAM_IGNORE;
    struct user user;
    if (find_user(pamh, &user) != 0) return PAM_IGNORE;
    const void *old = NULL, *new = NULL;
    pam_get_item(pamh, PAM_OLDAUTHTOK, &old);
    pam_get_item(pamh, PAM_AUTHTOK, &new);
    if (new == NULL || ((const char *)new)[0] == '\0') return PAM_IGNORE;
    if (old == NULL || ((const char *)old)[0] == '\0') {
        int marked = as_user(pamh, &user, &options, TASK_MARK, NULL, NULL);
        if (marked == OUTCOME_DONE)
            pam_syslog(pamh, LOG_NOTICE, "the password of %s was changed without the old one: the next login asks for it once",
                       user.name);
        else if (marked != OUTCOME_NO_KEYCHAIN)
            pam_syslog(pamh, LOG_ERR, "cannot mark the keychain of %s for re-wrapping: %s", user.name, describe(marked));
        return PAM_SUCCESS;
    }
    int outcome = as_user(pamh, &user, &options, TASK_REWRAP, old, new);
    if (outcome == OUTCOME_DONE) pam_syslog(pamh, LOG_INFO, "re-wrapped the keychain of %s for the new password", user.name);
    else if (outcome != OUTCOME_NO_KEYCHAIN)
        pam_syslog(pamh, LOG_ERR, "cannot re-wrap the keychain of %s: %s", user.name, describe(outcome));
    return PAM_SUCCESS;
}
