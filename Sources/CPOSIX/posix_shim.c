#define _GNU_SOURCE
#include "posix_shim.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <string.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <linux/rtnetlink.h>

int latchkey_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int latchkey_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

int latchkey_adopt_effective_group(void) {
    gid_t real, effective, saved;
    if (getresgid(&real, &effective, &saved) != 0) return -1;
    if (real == effective && saved == effective) return 0;
    return setresgid(effective, effective, effective);
}

int latchkey_peer_credentials(int socket, struct latchkey_credentials *credentials) {
    struct ucred peer;
    socklen_t length = sizeof peer;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) return -1;
    if (length != sizeof peer) {
        errno = EPROTO;
        return -1;
    }
    credentials->pid = peer.pid;
    credentials->uid = peer.uid;
    credentials->gid = peer.gid;
    return 0;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* asm-generic/socket.h, Linux 6.5; Debian 12's headers are older. */
#endif

int latchkey_peer_pidfd(int socket) {
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) return -1;
    if (length != sizeof pidfd || pidfd < 0) {
        if (pidfd >= 0) close(pidfd);
        errno = EPROTO;
        return -1;
    }
    return pidfd;
}

/* linux/pidfd.h, Linux 6.11: _IO(PIDFS_IOCTL_MAGIC, n). */
#define LATCHKEY_PIDFS_IOCTL_MAGIC 0xFF

int latchkey_pidfd_namespace(int pidfd, enum latchkey_namespace kind) {
    unsigned long request;
    switch (kind) {
    case LATCHKEY_NAMESPACE_USER: request = _IO(LATCHKEY_PIDFS_IOCTL_MAGIC, 9); break;
    case LATCHKEY_NAMESPACE_PID: request = _IO(LATCHKEY_PIDFS_IOCTL_MAGIC, 5); break;
    case LATCHKEY_NAMESPACE_MOUNT: request = _IO(LATCHKEY_PIDFS_IOCTL_MAGIC, 3); break;
    default: errno = EINVAL; return -1;
    }
    return ioctl(pidfd, request, 0);
}

int latchkey_enable_credential_passing(int socket) {
    int on = 1;
    return setsockopt(socket, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
}

ssize_t latchkey_receive_with_credentials(int socket, void *buffer, size_t length,
                                          struct latchkey_credentials *credentials, int *has_credentials) {
    /* Room for the credentials and a few descriptors (which are closed); more descriptors are dropped by
       the kernel (MSG_CTRUNC). */
    union {
        char bytes[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(8 * sizeof(int))];
        struct cmsghdr alignment;
    } control;
    struct iovec vector = {.iov_base = buffer, .iov_len = length};
    struct msghdr message;
    ssize_t received;
    *has_credentials = 0;
    do {
        memset(&message, 0, sizeof message);
        message.msg_iov = &vector;
        message.msg_iovlen = 1;
        message.msg_control = control.bytes;
        message.msg_controllen = sizeof control.bytes;
        received = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
    if (received < 0) return received;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET) continue;
        if (header->cmsg_type == SCM_CREDENTIALS && header->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred sender;
            memcpy(&sender, CMSG_DATA(header), sizeof sender);
            credentials->pid = sender.pid;
            credentials->uid = sender.uid;
            credentials->gid = sender.gid;
            *has_credentials = 1;
        } else if (header->cmsg_type == SCM_RIGHTS) {
            size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t index = 0; index < count; index++) {
                int passed;
                memcpy(&passed, CMSG_DATA(header) + index * sizeof(int), sizeof passed);
                close(passed);
            }
        }
    }
    return received;
}

int latchkey_accept_close_on_exec(int listener) { return accept4(listener, NULL, NULL, SOCK_CLOEXEC); }

short latchkey_spawn_new_session_flag(void) { return POSIX_SPAWN_SETSID; }

int latchkey_spawn_add_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

int latchkey_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *directory) {
    return posix_spawn_file_actions_addchdir_np(actions, directory);
}

int latchkey_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int latchkey_open_directory_path(const char *path) {
    int fd;
    do {
        fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

int latchkey_pidfd_exited(int pidfd) {
    struct pollfd entry = {.fd = pidfd, .events = POLLIN, .revents = 0};
    int ready;
    do {
        ready = poll(&entry, 1, 0);
    } while (ready < 0 && errno == EINTR);
    if (ready < 0) return -1;
    return ready > 0 ? 1 : 0;
}

int latchkey_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int latchkey_doorbell_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK); }

int latchkey_terminal_columns(int fd) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
    return size.ws_col;
}

long latchkey_unix_sockets(struct latchkey_unix_socket *sockets, size_t capacity) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -1;
    struct {
        struct nlmsghdr header;
        struct unix_diag_req request;
    } ask;
    memset(&ask, 0, sizeof ask);
    ask.header.nlmsg_len = sizeof ask;
    ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    ask.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    ask.request.sdiag_family = AF_UNIX;
    ask.request.udiag_states = ~0U;
    ask.request.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_PEER;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, &ask, sizeof ask, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    long count = 0;
    static __thread char buffer[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
    for (;;) {
        ssize_t received = recv(fd, buffer, sizeof buffer, 0);
        if (received < 0) {
            if (errno == EINTR) continue;
            int saved = errno;
            close(fd);
            errno = saved;
            return -1;
        }
        if (received == 0) break;
        for (struct nlmsghdr *header = (struct nlmsghdr *)buffer; NLMSG_OK(header, (size_t)received);
             header = NLMSG_NEXT(header, received)) {
            if (header->nlmsg_type == NLMSG_DONE) {
                close(fd);
                return count;
            }
            if (header->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *failure = NLMSG_DATA(header);
                close(fd);
                errno = failure->error < 0 ? -failure->error : EPROTO;
                return -1;
            }
            if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
            struct unix_diag_msg *entry = NLMSG_DATA(header);
            if ((size_t)count < capacity) {
                struct latchkey_unix_socket *out = &sockets[count];
                memset(out, 0, sizeof *out);
                out->inode = entry->udiag_ino;
                long length = (long)header->nlmsg_len - (long)NLMSG_LENGTH(sizeof *entry);
                for (struct rtattr *attribute = (struct rtattr *)(entry + 1); RTA_OK(attribute, length);
                     attribute = RTA_NEXT(attribute, length)) {
                    size_t size = RTA_PAYLOAD(attribute);
                    if (attribute->rta_type == UNIX_DIAG_NAME) {
                        if (size > sizeof out->name) size = sizeof out->name;
                        memcpy(out->name, RTA_DATA(attribute), size);
                        out->name_length = (unsigned int)size;
                    } else if (attribute->rta_type == UNIX_DIAG_PEER && size >= sizeof(unsigned int)) {
                        memcpy(&out->peer, RTA_DATA(attribute), sizeof(unsigned int));
                    }
                }
            }
            count++;
        }
    }
    close(fd);
    return count;
}

int latchkey_unix_socket_peer(unsigned int inode, unsigned int *peer) {
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
    ask.request.udiag_ino = inode;
    ask.request.udiag_show = UDIAG_SHOW_PEER;
    /* No cookie: any socket with this inode (an inode names one socket while it is open). */
    ask.request.udiag_cookie[0] = ~0U;
    ask.request.udiag_cookie[1] = ~0U;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, &ask, sizeof ask, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    char buffer[1024] __attribute__((aligned(NLMSG_ALIGNTO)));
    ssize_t received;
    do {
        received = recv(fd, buffer, sizeof buffer, 0);
    } while (received < 0 && errno == EINTR);
    int saved = errno;
    close(fd);
    if (received < 0) {
        errno = saved;
        return -1;
    }
    struct nlmsghdr *header = (struct nlmsghdr *)buffer;
    if (!NLMSG_OK(header, (size_t)received)) {
        errno = EPROTO;
        return -1;
    }
    if (header->nlmsg_type == NLMSG_ERROR) {
        struct nlmsgerr *failure = NLMSG_DATA(header);
        errno = failure->error < 0 ? -failure->error : EPROTO;
        return -1;
    }
    if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY) {
        errno = EPROTO;
        return -1;
    }
    struct unix_diag_msg *entry = NLMSG_DATA(header);
    if (entry->udiag_ino != inode) {
        errno = ENOENT;
        return -1;
    }
    *peer = 0;
    long length = (long)header->nlmsg_len - (long)NLMSG_LENGTH(sizeof *entry);
    for (struct rtattr *attribute = (struct rtattr *)(entry + 1); RTA_OK(attribute, length);
         attribute = RTA_NEXT(attribute, length)) {
        if (attribute->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(attribute) >= sizeof(unsigned int))
            memcpy(peer, RTA_DATA(attribute), sizeof(unsigned int));
    }
    return 0;
}

static char latchkey_fatal_name[64];
static size_t latchkey_fatal_name_length;

static void latchkey_fatal_signal(int signal) {
    char message[256];
    size_t length = 0;
    for (size_t index = 0; index < latchkey_fatal_name_length; index++) message[length++] = latchkey_fatal_name[index];
    static const char middle[] = ": fatal signal ";
    for (size_t index = 0; index < sizeof middle - 1; index++) message[length++] = middle[index];
    char digits[4];
    size_t count = 0;
    int value = signal;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value > 0 && count < sizeof digits);
    while (count > 0) message[length++] = digits[--count];
    static const char end[] = "; no backtrace and no core file are written (the memory holds secrets)\n";
    for (size_t index = 0; index < sizeof end - 1; index++) message[length++] = end[index];
    ssize_t ignored = write(2, message, length);
    (void)ignored;
    _exit(128 + signal);
}

int latchkey_exit_on_fatal_signals(const char *name) {
    size_t length = strlen(name);
    if (length > sizeof latchkey_fatal_name - 1) length = sizeof latchkey_fatal_name - 1;
    memcpy(latchkey_fatal_name, name, length);
    latchkey_fatal_name_length = length;
    static char alternate[65536];
    stack_t stack = {.ss_sp = alternate, .ss_size = sizeof alternate, .ss_flags = 0};
    if (sigaltstack(&stack, NULL) != 0) return -1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = latchkey_fatal_signal;
    action.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigfillset(&action.sa_mask);
    const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
    for (size_t index = 0; index < sizeof signals / sizeof signals[0]; index++) {
        if (sigaction(signals[index], &action, NULL) != 0) return -1;
    }
    return 0;
}

int latchkey_name_current_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
