import Glibc

/// Lowers the calling thread's scheduling priority (nice 10): for the store's writer and syncer, whose work a
/// message's way to listeners and peers never waits for, so that on a busy machine they yield the processor to
/// that way instead of sharing it. On Linux nice is per thread, and `who == 0` names the calling thread; failing
/// to lower it is harmless.
func lowerThreadPriority() {
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
}
