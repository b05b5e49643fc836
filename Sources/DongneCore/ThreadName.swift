import Glibc

/// Names the calling thread for the kernel, so that `top -H`, `perf` and `/proc/PID/task/*/comm` tell a node's
/// threads apart. Foundation's `Thread.name` does not reach the kernel on Linux, and a thread otherwise inherits
/// the name of the thread that made it (often a concurrency pool thread's). Longer names are cut to the
/// kernel's 15 bytes. Glibc's `pthread_setname_np` is not visible to Swift, so this writes
/// `/proc/thread-self/comm`, which is what it does too; failing is harmless.
public func nameCurrentThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
}
