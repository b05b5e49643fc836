import Foundation

/// Prepares a store thread for its work: names it `name` (at most 15 bytes: what `top -H`, `perf` and
/// `/proc/PID/task/*/comm` show; Foundation passes a name to the kernel only when a thread sets its own), and
/// lowers its scheduling priority (nice 10). The store's writer, syncer and loader do work that a message's way
/// to listeners and peers never waits for, so on a busy machine they yield the processor to that way instead of
/// sharing it; yet they keep a share (not `SCHED_IDLE`, under which a machine busy with other work would starve
/// every commit). On Linux nice is per thread, and `who == 0` names the calling thread; failing is harmless.
func prepareBackgroundThread(named name: String) {
    Thread.current.name = name
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
}
