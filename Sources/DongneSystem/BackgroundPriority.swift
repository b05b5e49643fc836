import CSystem
import Foundation

/// Names the calling thread for the kernel (at most 15 bytes are kept). A thread the system makes inherits
/// its creator's name otherwise: a reader thread started from a pool thread would show as the pool's.
package func nameThisThread(_ name: String) {
    dongne_name_thread(name)
}

/// Prepares a store thread for its work: names it `name` (at most 15 bytes: what `top -H`, `perf` and
/// `/proc/PID/task/*/comm` show; Foundation passes a name to the kernel only when a thread sets its own), and
/// lowers its scheduling priority. The store's syncer and loader, and the checks of messages already shown, do
/// work that a message's way to listeners and peers never waits for, so on a busy machine they should yield the
/// processor to that way instead of sharing it; yet they keep a share (not `SCHED_IDLE`, under which a machine
/// busy with other work would starve every commit). Two settings do that:
/// - nice 10, a tenth of a normal thread's share when both want the processor;
/// - a long scheduler slice (20 ms, `sched_attr.sched_runtime`, Linux 6.12 and later). Linux's EEVDF
///   scheduler lets a running thread finish its slice before a thread that wakes takes over, unless the
///   woken thread asks for a shorter slice; with a longer one here, every ordinary thread that wakes (a
///   socket's reader, a listener's callback) takes the processor from these at once.
///
/// The store's writer takes the long slice only (`share: .fair`): it is one stage of a catch-up, between the
/// signature checks on every core and the acknowledgements that let the peer send more, so at nice 10 it fell
/// behind the checks (a tenth of their share), the peer's window filled with checked documents waiting for it,
/// and the checks stopped for want of documents while the writer worked alone on one core.
///
/// On Linux both are per thread, and `pid 0` names the calling thread. An older kernel ignores the slice;
/// should the call fail, nice alone is set. Failing is harmless. A thread cannot take a higher priority back
/// without privileges, so each thread is set once, as it starts.
package func prepareBackgroundThread(named name: String, share: BackgroundShare = .small) {
    let nice: Int32 = switch share {
    case .small: 10
    case .fair: 0
    }
    if dongne_set_thread_nice_and_slice(nice, backgroundSlice) != 0 {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
    }
    dongne_name_thread(name)  // after: a thread that bears the name runs at its priority
}

/// The scheduler slice background threads ask for, in nanoseconds.
package let backgroundSlice: UInt64 = 20_000_000

/// The share of the processor a background thread takes when others want it too (see
/// ``prepareBackgroundThread(named:share:)``).
package enum BackgroundShare: Sendable {
    /// A tenth of a normal thread's (nice 10).
    case small
    /// A normal thread's (nice 0); only the long slice sets it apart.
    case fair
}
