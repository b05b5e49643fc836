import CSystem
import Glibc

/// What one thread sleeps on: woken at once by ``wake()``, or later by a one-shot timer on the monotonic clock
/// that any thread may arm with ``arm(after:)``: an eventfd and a timerfd under one poll(2).
///
/// A condition variable can only be signalled now. The store's writer also needs "wake me in 4 ms": a
/// deferrable write arrives, and the writer should commit it later without running now. Signalling it at once
/// (for it to start a timed wait) costs a thread wake-up and a context switch at the very moment a message is
/// on its way to listeners, on every node that got it; arming a timer costs one system call and no wake-up.
/// Both descriptors are level-triggered counters, so a wake or an expiry that comes before the sleeper polls
/// is not lost: its poll returns at once.
package final class ThreadWakeup: @unchecked Sendable {
    private let event: Int32
    private let timer: Int32

    /// A new eventfd and timerfd; nil (with errno set) when the system has no descriptors left.
    package init?() {
        let event = dongne_eventfd()
        guard event >= 0 else { return nil }
        let timer = dongne_timerfd()
        guard timer >= 0 else {
            close(event)
            return nil
        }
        (self.event, self.timer) = (event, timer)
    }

    deinit {
        close(event)
        close(timer)
    }

    /// Wakes the sleeper now (or makes its next ``sleep()`` return at once).
    package func wake() {
        var one: UInt64 = 1
        // Fails only when the counter would overflow, which leaves it readable: the sleeper wakes anyway.
        _ = write(event, &one, MemoryLayout<UInt64>.size)
    }

    /// Makes the timer expire once, `delay` from now (at least a nanosecond: zero would disarm it), replacing
    /// any earlier arming.
    package func arm(after delay: Duration) {
        let (seconds, attoseconds) = max(delay, .zero).components
        let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        _ = dongne_timerfd_arm(timer, max(1, nanoseconds))
    }

    /// Stops the timer, if it is armed.
    package func disarm() {
        _ = dongne_timerfd_arm(timer, 0)
    }

    /// Blocks until woken or the timer expires, and takes both events; whether the timer expired.
    package func sleep() -> Bool {
        var descriptors = [pollfd(fd: event, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: timer, events: Int16(POLLIN), revents: 0)]
        // Anything but EINTR (EINVAL, ENOMEM) returns as a spurious wake-up: the sleeper checks its state again.
        _ = try? systemCall("poll") { poll(&descriptors, 2, -1) }
        var count: UInt64 = 0
        if descriptors[0].revents != 0 { _ = read(event, &count, MemoryLayout<UInt64>.size) }
        guard descriptors[1].revents != 0 else { return false }
        return read(timer, &count, MemoryLayout<UInt64>.size) == MemoryLayout<UInt64>.size
    }
}
