import CSystem
import Foundation

/// Names the calling thread for the kernel (at most 15 bytes are kept). A thread the system makes inherits
/// its creator's name otherwise: a reader thread started from a pool thread would show as the pool's.
package func nameThisThread(_ name: String) {
    dongne_name_thread(name)
}

/// Prepares a background thread for its work: names it `name` (at most 15 bytes: what `top -H`, `perf` and
/// `/proc/PID/task/*/comm` show; Foundation passes a name to the kernel only when a thread sets its own), and
/// sets its scheduling priority relative to the node's own (the nice value the process was started with, by
/// `nice` or systemd's `Nice=`, which the network thread keeps). The store's syncer and loader, the checks of
/// messages already shown and stamp mining do work that a message's way to listeners and peers never waits for,
/// so on a busy machine they should yield the processor to that way instead of sharing it; yet they keep a share
/// (not `SCHED_IDLE`, under which a machine busy with other work would starve every commit). Two settings do that:
/// - 10 above the node's nice (at most 19), a tenth of the network thread's share when both want the processor;
/// - a long scheduler slice (20 ms, `sched_attr.sched_runtime`, Linux 6.12 and later). Linux's EEVDF
///   scheduler lets a running thread finish its slice before a thread that wakes takes over, unless the
///   woken thread asks for a shorter slice; with a longer one here, every ordinary thread that wakes (a
///   socket's reader, a listener's callback) takes the processor from these at once.
///
/// The store's writer takes the long slice only (`share: .fair`, the node's own nice): it is one stage of a
/// catch-up, between the signature checks on every core and the acknowledgements that let the peer send more,
/// so at nice 10 it fell behind the checks (a tenth of their share), the peer's window filled with checked
/// documents waiting for it, and the checks stopped for want of documents while the writer worked alone on one
/// core.
///
/// On Linux both are per thread, and `pid 0` names the calling thread. Only a privileged thread may lower its
/// nice value: should the call fail (a thread started by one already niced further), the thread keeps its own
/// nice and takes the slice alone; should that fail too (an older kernel), nice alone is set. Failing is harmless.
package func prepareBackgroundThread(named name: String, share: BackgroundShare = .small) {
    let wanted = share.nice(besideTheNode: processNice())
    if dongne_set_thread_nice_and_slice(wanted, backgroundSlice) != 0 {
        let kept = max(wanted, threadNice())
        if dongne_set_thread_nice_and_slice(kept, backgroundSlice) != 0 {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, kept)
        }
    }
    dongne_name_thread(name)  // after: a thread that bears the name runs at its priority
}

/// The scheduler slice background threads ask for, in nanoseconds.
package let backgroundSlice: UInt64 = 20_000_000

/// The nice value the node was started with: its main thread's, whose id is the process's.
package func processNice() -> Int32 {
    nice(of: getpid())
}

/// The calling thread's nice value.
private func threadNice() -> Int32 {
    nice(of: 0)
}

/// `getpriority(2)` of one thread (0: the calling one); 0 should it fail (-1 is a valid answer, so errno says).
private func nice(of thread: pid_t) -> Int32 {
    errno = 0
    let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread))
    return errno == 0 ? value : 0
}

/// The share of the processor a background thread takes when others want it too (see
/// ``prepareBackgroundThread(named:share:)``).
package enum BackgroundShare: Sendable {
    /// A tenth of the network thread's: 10 above the node's nice value, at most 19.
    case small
    /// The network thread's: the node's nice value; only the long slice sets it apart.
    case fair

    /// The nice value of a thread with this share, in a node started at `nodeNice`.
    package func nice(besideTheNode nodeNice: Int32) -> Int32 {
        switch self {
        case .small: min(19, nodeNice + 10)
        case .fair: nodeNice
        }
    }
}
