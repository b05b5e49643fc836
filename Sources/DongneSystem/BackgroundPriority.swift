import CSystem
import Foundation

/// Names the calling thread for the kernel (at most 15 bytes are kept). A thread the system makes inherits
/// its creator's name otherwise: a reader thread started from a pool thread would show as the pool's.
package func nameThisThread(_ name: String) {
    dongne_name_thread(name)
}

/// Prepares a store thread for its work: names it `name` (at most 15 bytes: what `top -H`, `perf` and
/// `/proc/PID/task/*/comm` show; Foundation passes a name to the kernel only when a thread sets its own), and
/// lowers its scheduling priority. The store's writer, syncer and loader do work that a message's way to
/// listeners and peers never waits for, so on a busy machine they should yield the processor to that way
/// instead of sharing it; yet they keep a share (not `SCHED_IDLE`, under which a machine busy with other work
/// would starve every commit). Two settings do that:
/// - nice 10, a tenth of a normal thread's share when both want the processor;
/// - a long scheduler slice (20 ms, `sched_attr.sched_runtime`, Linux 6.12 and later). Linux's EEVDF
///   scheduler lets a running thread finish its slice before a thread that wakes takes over, unless the
///   woken thread asks for a shorter slice; with a longer one here, every ordinary thread that wakes (a
///   socket's reader, a listener's callback) takes the processor from these at once.
///
/// On Linux both are per thread, and `pid 0` names the calling thread. An older kernel ignores the slice;
/// should the call fail, nice alone is set. Failing is harmless.
package func prepareBackgroundThread(named name: String) {
    dongne_name_thread(name)
    if dongne_set_thread_nice_and_slice(10, 20_000_000) != 0 {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    }
}
