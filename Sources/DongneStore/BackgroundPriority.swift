import DongneCore
import Glibc

/// Prepares a store thread for its work: names it `name` for the kernel (see ``nameCurrentThread(_:)``), and
/// moves it to the `SCHED_IDLE` policy. The store's writer and syncer do work that a message's way to listeners
/// and peers never waits for. Nice alone is not enough on a busy machine: a processor running a niced thread
/// still counts as busy, so the scheduler queues a waking thread of the message's way behind other work on
/// the other processor (measured: up to 0.5 ms while a syncer's fsync held the second one). A processor running
/// only `SCHED_IDLE` threads counts as idle when a thread wakes, so that thread takes it at once. On Linux the
/// policy is per thread and pid 0 names the calling thread; if it cannot be set, nice 10 is the fallback, and
/// failing that the thread runs as it is.
func prepareBackgroundThread(named name: String) {
    nameCurrentThread(name)
    var parameters = sched_param(sched_priority: 0)
    if sched_setscheduler(0, schedulerIdlePolicy, &parameters) != 0 {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    }
}

/// `SCHED_IDLE` from `<sched.h>`, which Swift's Glibc module leaves out (it is a GNU extension).
private let schedulerIdlePolicy: Int32 = 5
