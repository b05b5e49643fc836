#ifndef DONGNE_CSYSTEM_SHIM_H
#define DONGNE_CSYSTEM_SHIM_H
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

// struct sched_attr of sched_setattr(2), which glibc before 2.41 neither declares nor wraps.
struct dongne_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

// Sets the calling thread's nice value and, under SCHED_OTHER, its scheduler slice (sched_runtime, in ns;
// Linux 6.12 and later use it as the thread's EEVDF request size). Returns 0, or -1 with errno set.
static inline int dongne_set_thread_nice_and_slice(int nice, uint64_t slice_nanoseconds) {
    struct dongne_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.sched_policy = 0;  // SCHED_OTHER
    attr.sched_nice = nice;
    attr.sched_runtime = slice_nanoseconds;
    return (int)syscall(SYS_sched_setattr, 0, &attr, 0);
}

// Names the calling thread for the kernel (what perf, top -H and /proc/PID/task/*/comm show; at most 15 bytes
// are kept). prctl(2) is variadic, which Swift cannot call; Foundation's Thread.name reaches the kernel only if
// the thread sets it after its parent has finished starting it.
static inline void dongne_name_thread(const char *name) {
    (void)prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

// posix_spawn_file_actions_addclosefrom_np(3) (glibc 2.34 and later), which glibc declares only under
// _GNU_SOURCE: has the child close every descriptor from `from` up, so that none another thread opened without
// close-on-exec meanwhile leaks into it. Returns 0 or an error number.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int dongne_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

// accept4(2), which glibc declares only under _GNU_SOURCE: accepts a connection whose socket is non-blocking
// and close-on-exec from the start (no window in which another thread's exec could inherit it). Returns the
// descriptor, or -1 with errno set.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
static inline int dongne_accept(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

// A non-blocking, close-on-exec eventfd(2) (a counter another thread adds to, to wake a poll(2)), or -1.
static inline int dongne_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

// poll(2) with a timeout in nanoseconds, as ppoll(2) takes it (glibc declares ppoll only under _GNU_SOURCE);
// a negative timeout waits without limit. Returns what poll returns, with errno set on -1.
static inline int dongne_poll(struct pollfd *descriptors, nfds_t count, int64_t nanoseconds) {
    if (nanoseconds < 0) return (int)syscall(SYS_ppoll, descriptors, count, NULL, NULL, 0);
    struct timespec limit = { .tv_sec = nanoseconds / 1000000000, .tv_nsec = nanoseconds % 1000000000 };
    return (int)syscall(SYS_ppoll, descriptors, count, &limit, NULL, 0);
}

// A non-blocking, close-on-exec timerfd(2) on CLOCK_MONOTONIC, or -1.
static inline int dongne_timerfd(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

// Arms `fd` (a timerfd) to expire once, `nanoseconds` from now; 0 disarms it. Returns 0, or -1 with errno set.
static inline int dongne_timerfd_arm(int fd, uint64_t nanoseconds) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    spec.it_value.tv_sec = (time_t)(nanoseconds / 1000000000u);
    spec.it_value.tv_nsec = (long)(nanoseconds % 1000000000u);
    return timerfd_settime(fd, 0, &spec, NULL);
}

// struct mmsghdr of sendmmsg(2), which glibc declares only under _GNU_SOURCE.
struct dongne_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

// The most datagrams one dongne_send_datagrams call sends.
#define DONGNE_MAXIMUM_DATAGRAMS 64

// Sends `count` datagrams (at most DONGNE_MAXIMUM_DATAGRAMS) in one sendmmsg(2), without blocking: datagram i
// is the `lengths[i]` bytes of `bytes` after those of the datagrams before it, to `addresses[i]`. Returns how
// many were sent (the first that fails ends the call), or -1 with errno set when the first one failed.
static inline int dongne_send_datagrams(int fd, const uint8_t *bytes, const uint32_t *lengths,
                                        const struct sockaddr_in *addresses, unsigned int count) {
    struct iovec vectors[DONGNE_MAXIMUM_DATAGRAMS];
    struct dongne_mmsghdr messages[DONGNE_MAXIMUM_DATAGRAMS];
    if (count > DONGNE_MAXIMUM_DATAGRAMS) count = DONGNE_MAXIMUM_DATAGRAMS;
    size_t offset = 0;
    for (unsigned int i = 0; i < count; i++) {
        vectors[i].iov_base = (void *)(bytes + offset);
        vectors[i].iov_len = lengths[i];
        offset += lengths[i];
        memset(&messages[i], 0, sizeof messages[i]);
        messages[i].msg_hdr.msg_name = (void *)&addresses[i];
        messages[i].msg_hdr.msg_namelen = sizeof addresses[i];
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
    }
    return (int)syscall(SYS_sendmmsg, fd, messages, count, MSG_DONTWAIT);
}

// The user id of the process at the other end of a Unix-domain socket (SO_PEERCRED, socket(7)), as the kernel
// recorded it when the connection was made: it cannot be forged by the peer. struct ucred is declared only under
// _GNU_SOURCE, so its layout (pid, uid, gid) is spelled here. Returns 0, or -1 with errno set.
struct dongne_peer_credentials {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
};
static inline int dongne_peer_uid(int fd, uint32_t *uid) {
    struct dongne_peer_credentials credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *uid = credentials.uid;
    return 0;
}

#endif
