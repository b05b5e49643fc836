import DongneCore
import Glibc

/// Prepares a store thread for its work: names it `name` for the kernel (see ``nameCurrentThread(_:)``), and
/// lowers its scheduling priority (nice 10). The store's writer and syncer do work that a message's way to
/// listeners and peers never waits for, so on a busy machine they yield the processor to that way instead of
/// sharing it. On Linux nice is per thread, and `who == 0` names the calling thread; failing to lower it is
/// harmless.
func prepareBackgroundThread(named name: String) {
    nameCurrentThread(name)
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
}
