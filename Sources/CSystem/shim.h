#ifndef DONGNE_CSYSTEM_SHIM_H
#define DONGNE_CSYSTEM_SHIM_H
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
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

// A close-on-exec epoll(7) instance, or -1 with errno set.
static inline int dongne_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

// epoll_ctl(2) of `fd` with `events` (level-triggered); the event's data is the descriptor and `generation` (the
// watch it is for, which dongne_epoll_wait hands back beside it). `operation` is EPOLL_CTL_ADD, EPOLL_CTL_MOD or
// EPOLL_CTL_DEL. Returns 0, or -1 with errno set.
static inline int dongne_epoll_control(int epoll, int operation, int fd, uint32_t events, uint32_t generation) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = events;
    event.data.u64 = ((uint64_t)generation << 32) | (uint32_t)fd;
    return epoll_ctl(epoll, operation, fd, &event);
}

// The most events one dongne_epoll_wait call reports.
#define DONGNE_MAXIMUM_EPOLL_EVENTS 64

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441  // the same number on every architecture (Linux 5.11), for older headers
#endif

// Set once epoll_pwait2(2) failed other than by a signal (a kernel before 5.11, or a sandbox that forbids it):
// epoll_wait(2) is used from then on. Every loop's thread reads it, hence the atomic accesses.
static int dongne_epoll_pwait2_unavailable = 0;

// Waits for at most `nanoseconds` (a negative timeout waits without limit) until a descriptor of `epoll` is
// ready, and writes the ready descriptors, the generation each was registered with, and their events (at most
// `count`, up to DONGNE_MAXIMUM_EPOLL_EVENTS) into `descriptors`, `generations` and `events`: struct epoll_event
// is packed, which Swift does not import. Waits with
// nanosecond precision by epoll_pwait2(2), else by epoll_wait(2) with the timeout rounded up to a millisecond.
// Returns how many are ready, or -1 with errno set.
static inline int dongne_epoll_wait(
    int epoll, int *descriptors, uint32_t *generations, uint32_t *events, int count, int64_t nanoseconds) {
    struct epoll_event ready[DONGNE_MAXIMUM_EPOLL_EVENTS];
    if (count > DONGNE_MAXIMUM_EPOLL_EVENTS) count = DONGNE_MAXIMUM_EPOLL_EVENTS;
    int found = -1;
    if (nanoseconds < 0) {
        found = epoll_wait(epoll, ready, count, -1);
    } else {
        if (!__atomic_load_n(&dongne_epoll_pwait2_unavailable, __ATOMIC_RELAXED)) {
            struct timespec limit = { .tv_sec = nanoseconds / 1000000000, .tv_nsec = nanoseconds % 1000000000 };
            found = (int)syscall(SYS_epoll_pwait2, epoll, ready, count, &limit, NULL, 0);
            if (found < 0 && errno != EINTR) __atomic_store_n(&dongne_epoll_pwait2_unavailable, 1, __ATOMIC_RELAXED);
        }
        if (__atomic_load_n(&dongne_epoll_pwait2_unavailable, __ATOMIC_RELAXED)) {
            int64_t milliseconds = (nanoseconds + 999999) / 1000000;
            found = epoll_wait(epoll, ready, count, milliseconds > INT_MAX ? INT_MAX : (int)milliseconds);
        }
    }
    for (int index = 0; index < found; index++) {
        descriptors[index] = (int)(uint32_t)ready[index].data.u64;
        generations[index] = (uint32_t)(ready[index].data.u64 >> 32);
        events[index] = ready[index].events;
    }
    return found;
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
