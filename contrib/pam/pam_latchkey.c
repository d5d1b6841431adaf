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
 *           already answers (a screen locker's stack), unlocks at once.
 * session   (after pam_systemd) unlocks through $XDG_RUNTIME_DIR/latchkey/agent.sock, whose directory and
 *           socket must belong to the user and whose listener must run as the user (SO_PEERCRED); with
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
 *          debug                         log every step to the journal
 *
 * Every entry point returns PAM_SUCCESS or PAM_IGNORE: a failure is logged (pam_syslog) and the login goes on.
 * The password never reaches argv, the environment or a file: it is copied into a forked child that runs as
 * the user and writes it to the agent's socket, or to a pipe the `latchkey` tool reads (--passphrase-fd).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
#define LK_CHALLENGE 16
#define LK_ERR_AUTH_FAILED (-25293) /* errSecAuthFailed */
/* errSecNoSuchKeychain: the agent waits for a keychain that does not exist yet (latchkeyd --wait-for-keychain)
 * and holds the password the unlock handed over, to unlock the keychain with once it appears. */
#define LK_ERR_NO_SUCH_KEYCHAIN (-25294)
#define LK_TIMEOUT_SECONDS 20
/* The most a child that acts as the user may take, whatever it waits for (SIGALRM ends it). */
#define LK_CHILD_SECONDS 90

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
};

static const char *const data_key = "pam_latchkey_authtok";
static const char *const unlocked_key = "pam_latchkey_unlocked";

struct options {
    const char *only_if;
    const char *latchkey;
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
    const char *runtime = pam_getenv(pamh, "XDG_RUNTIME_DIR");
    int written = runtime && runtime[0] == '/' ? snprintf(user->runtime, sizeof user->runtime, "%s", runtime)
                                               : snprintf(user->runtime, sizeof user->runtime, "/run/user/%u", (unsigned)user->uid);
    return written < (int)sizeof user->runtime ? 0 : -1;
}

/* ---- In the child, as the user: only system calls and the stack from here to `run_as_user`. ---- */

static int become_user(const struct user *user) {
    if (getuid() == user->uid && geteuid() == user->uid) return 0;
    if (setgroups(1, &user->gid) != 0) return -1;
    if (setresgid(user->gid, user->gid, user->gid) != 0) return -1;
    if (setresuid(user->uid, user->uid, user->uid) != 0) return -1;
    if (geteuid() != user->uid || getuid() != user->uid || getegid() != user->gid) return -1;
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

static int read_all(int fd, void *bytes, size_t count) {
    unsigned char *next = bytes;
    while (count > 0) {
        ssize_t got = recv(fd, next, count, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
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

/* One frame: reads its length and its body into `buffer` (at most `capacity` bytes). */
static int receive_frame(int fd, unsigned char *buffer, size_t capacity, size_t *length) {
    unsigned char header[4];
    if (read_all(fd, header, 4) != 0) return -1;
    uint32_t size = (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16 | (uint32_t)header[2] << 8 | header[3];
    if (size > capacity) return -1;
    if (read_all(fd, buffer, size) != 0) return -1;
    *length = size;
    return 0;
}

/* Sends one request (operation, one field) and returns the answer's status (0: success); -1 when the
 * conversation broke off. */
static int request(int fd, uint32_t id, unsigned char operation, const unsigned char *field, size_t field_length,
                   const unsigned char *second, size_t second_length, int has_second) {
    size_t body = 2 + 1 + 4 + 1 + (field ? 4 + field_length : 0) + (has_second ? 4 + second_length : 0);
    unsigned char stack[4 + 2 + 1 + 4 + 1 + 4 + 1024 + 4 + 64];
    if (4 + body > sizeof stack) return -1;
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
    if (sent != 0) return -1;
    unsigned char answer[4096];
    size_t length = 0;
    if (receive_frame(fd, answer, sizeof answer, &length) != 0) return -1;
    if (length < 2 + 1 + 4 + 1 + 4 || answer[0] != 'L' || answer[1] != 'K' || answer[2] != LK_VERSION) return -1;
    return (int)(int32_t)get32le(answer + 8);
}

/* Connects to the user's agent after checking its directory and socket, then its listener. */
static int connect_agent(const struct user *user, int *descriptor) {
    char directory[1100], path[1200];
    snprintf(directory, sizeof directory, "%s/latchkey", user->runtime);
    snprintf(path, sizeof path, "%s/agent.sock", directory);
    struct stat status;
    if (lstat(directory, &status) != 0) return OUTCOME_NO_AGENT;
    if (!S_ISDIR(status.st_mode) || status.st_uid != user->uid || (status.st_mode & 077) != 0) return OUTCOME_UNTRUSTED;
    if (lstat(path, &status) != 0) return OUTCOME_NO_AGENT;
    if (!S_ISSOCK(status.st_mode) || status.st_uid != user->uid) return OUTCOME_UNTRUSTED;
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path) return OUTCOME_NO_AGENT;
    memcpy(address.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return OUTCOME_BROKEN;
    struct timeval timeout = {.tv_sec = LK_TIMEOUT_SECONDS, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
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

/* The greeting, then hello (an empty keychain path: the keychain this agent serves), then unlock (with no
 * password: the unattended TPM unlock). */
static int unlock_agent(const struct user *user, const char *password) {
    int fd = -1;
    int connected = connect_agent(user, &fd);
    if (connected != OUTCOME_DONE) return connected;
    unsigned char greeting[64];
    size_t length = 0;
    if (receive_frame(fd, greeting, sizeof greeting, &length) != 0 || length != 4 + LK_CHALLENGE || greeting[0] != 'L' ||
        greeting[1] != 'K' || greeting[2] != LK_VERSION || greeting[3] != 'G') {
        close(fd);
        return OUTCOME_BROKEN;
    }
    /* hello: path (empty), challenge — `request` writes the second field first. */
    int status = request(fd, 1, LK_OP_HELLO, greeting + 4, LK_CHALLENGE, (const unsigned char *)"", 0, 1);
    if (status != 0) {
        close(fd);
        return status == -1 ? OUTCOME_BROKEN : OUTCOME_REFUSED;
    }
    if (password == NULL) {
        /* No password: the keychain's unattended TPM unlock, if it has one. */
        status = request(fd, 2, LK_OP_UNLOCK_UNATTENDED, NULL, 0, NULL, 0, 0);
        close(fd);
        if (status == 0) return OUTCOME_DONE;
        return status == -1 ? OUTCOME_BROKEN : OUTCOME_REFUSED;
    }
    size_t size = strlen(password);
    if (size > 1024) {
        close(fd);
        return OUTCOME_REFUSED;
    }
    status = request(fd, 2, LK_OP_UNLOCK, (const unsigned char *)password, size, NULL, 0, 0);
    close(fd);
    if (status == 0) return OUTCOME_DONE;
    if (status == LK_ERR_AUTH_FAILED) return OUTCOME_WRONG_PASSWORD;
    if (status == LK_ERR_NO_SUCH_KEYCHAIN) return OUTCOME_HELD;
    return status == -1 ? OUTCOME_BROKEN : OUTCOME_REFUSED;
}

static void keychain_directory(const struct user *user, char *out, size_t size) {
    snprintf(out, size, "%s/.local/share/latchkey", user->home);
}

static const char *latchkey_tool(const struct options *options) {
    if (options->latchkey) return options->latchkey;
    return access("/usr/local/bin/latchkey", X_OK) == 0 ? "/usr/local/bin/latchkey" : "/usr/bin/latchkey";
}

/* Puts `secret` in a pipe and makes its reading end descriptor `target` (the secret is far below a pipe's
 * capacity, so the write never blocks). */
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

/* Runs the latchkey tool as the user (already become) with the secrets on descriptors 3 and 4; returns
 * its outcome. `first`/`second` may be NULL. */
static int run_tool(const struct user *user, unsigned seconds, const char *tool, const char *const *arguments,
                    const char *first, const char *second) {
    pid_t child = fork();
    if (child < 0) return OUTCOME_SETUP;
    if (child == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
            if (null > 2) close(null);
        }
        alarm(seconds); /* kept across execve: a tool that hangs is ended */
        if (first && secret_descriptor(first, 3) != 0) _exit(OUTCOME_SETUP);
        if (second && secret_descriptor(second, 4) != 0) _exit(OUTCOME_SETUP);
        char home[1100], runtime[1100], name[300], logname[300];
        snprintf(home, sizeof home, "HOME=%s", user->home);
        snprintf(runtime, sizeof runtime, "XDG_RUNTIME_DIR=%s", user->runtime);
        snprintf(name, sizeof name, "USER=%s", user->name);
        snprintf(logname, sizeof logname, "LOGNAME=%s", user->name);
        char *environment[] = {home, runtime, name, logname, "PATH=/usr/local/bin:/usr/bin:/bin", "NO_COLOR=1", NULL};
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

/* What a child does as the user. */
enum task { TASK_UNLOCK, TASK_CREATE, TASK_REWRAP, TASK_MARK, TASK_MARKED, TASK_UNMARK };

static void marker_path(const struct user *user, char *out, size_t size) {
    char directory[1100];
    keychain_directory(user, directory, sizeof directory);
    snprintf(out, size, "%s/.login-password-changed", directory);
}

static int child_task(const struct user *user, const struct options *options, enum task task, const char *old,
                      const char *new) {
    if (become_user(user) != 0) return OUTCOME_SETUP;
    const char *tool = latchkey_tool(options);
    char directory[1100], keychain[1200], marker[1200];
    keychain_directory(user, directory, sizeof directory);
    snprintf(keychain, sizeof keychain, "%s/login.keychain", directory);
    marker_path(user, marker, sizeof marker);
    switch (task) {
    case TASK_UNLOCK: return unlock_agent(user, new);
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

/* Runs `task` in a forked child as the user (the caller may be root, or the user already). */
static int as_user(pam_handle_t *pamh, const struct user *user, const struct options *options, enum task task,
                   const char *old, const char *new) {
    struct sigaction ignore, previous;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_DFL;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGCHLD, &ignore, &previous); /* waitpid must see our child, whatever the program set */
    pid_t child = fork();
    if (child < 0) {
        sigaction(SIGCHLD, &previous, NULL);
        pam_syslog(pamh, LOG_ERR, "cannot fork: %s", strerror(errno));
        return OUTCOME_SETUP;
    }
    if (child == 0) {
        signal(SIGPIPE, SIG_IGN);
        signal(SIGALRM, SIG_DFL);
        alarm(options->child_seconds); /* the login never waits longer for this child */
        _exit(child_task(user, options, task, old, new));
    }
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(child, &status, 0)) < 0 && errno == EINTR) {}
    sigaction(SIGCHLD, &previous, NULL);
    if (waited != child || !WIFEXITED(status)) return OUTCOME_BROKEN;
    return WEXITSTATUS(status);
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
    } else if (options.debug) {
        pam_syslog(pamh, LOG_DEBUG, "auth: not unlocked now: %s", describe(outcome));
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
    int outcome = as_user(pamh, &user, &options, TASK_UNLOCK, NULL, password);
    if (outcome == OUTCOME_WRONG_PASSWORD && rewrap_after_root_change(pamh, &user, &options, password))
        outcome = as_user(pamh, &user, &options, TASK_UNLOCK, NULL, password);
    if (outcome == OUTCOME_DONE) pam_syslog(pamh, LOG_INFO, "unlocked the keychain of %s", user.name);
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
