import Glibc
import Synchronization
import DongneSystem

/// The lock that makes a data directory one node's: `flock(2)` on a `lock` file inside it, held for as long as
/// the node runs and released by the kernel when the process ends however it ends. Two processes on one
/// directory would run as one identity, each seeing the other as a peer connected to itself.
///
/// The file holds the holder's process id, so that the one refused can say who holds it.
public final class DataDirectoryLock: Sendable {
    /// The lock file's name inside the data directory.
    public static let fileName = "lock"

    /// The lock file's descriptor while held (-1 once released).
    private let descriptor: Mutex<Int32>

    /// Takes the lock of `directory`, or throws ``StoreError/locked(path:holder:)`` naming the process that
    /// holds it.
    public init(directory: String) throws(StoreError) {
        let path = directory + "/" + Self.fileName
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .file(
                path: path, reason: "cannot open the lock file: \(SystemError.last(function: "open").explanation)")
        }
        guard Self.lock(descriptor) else {
            let holder = Self.holder(descriptor)
            close(descriptor)
            throw .locked(path: directory, holder: holder)
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
        self.descriptor = Mutex(descriptor)
    }

    /// Releases the lock; idempotent. (The kernel also releases it when the process ends.)
    public func release() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit { release() }

    /// How long a lock that this very process wrote is waited for before it counts as held.
    static let ownReleaseWait: Duration = .seconds(1)

    /// Takes the lock without blocking; when this process itself wrote it, waits up to ``ownReleaseWait`` for it.
    ///
    /// A lock belongs to the open file, which a child being spawned shares until it runs its program (the
    /// descriptor is close-on-exec): a node of this process that just released the lock may still hold it through
    /// such a child for a moment. Another process's lock is refused at once.
    private static func lock(_ descriptor: Int32) -> Bool {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        guard holderPID(descriptor) == getpid() else { return false }
        let deadline = ContinuousClock.now + ownReleaseWait
        while ContinuousClock.now < deadline {
            usleep(5_000)
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        }
        return false
    }

    /// The process id the holder wrote, if it wrote one.
    private static func holderPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        return Int32(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingCharacters(in: "\n "))
    }

    /// "process 1234 (dongne)", from the pid the holder wrote and what the kernel says that process runs.
    private static func holder(_ descriptor: Int32) -> String {
        guard let pid = holderPID(descriptor) else { return "another process" }
        guard let command = command(of: pid) else { return "process \(pid)" }
        return "process \(pid) (\(command))"
    }

    private static func command(of pid: Int32) -> String? {
        let file = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(file, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self).trimmingCharacters(in: "\n ")
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
