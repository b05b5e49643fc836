import Foundation
import Synchronization

/// The handle of a snapshot listener: Firestore's `ListenerRegistration`.
///
/// `remove()` is idempotent, and once it returns no callback of this listener runs again: a callback in
/// progress on another thread finishes first (remove waits for it), and a callback may remove its own
/// listener. Dropping the handle does not remove the listener (as in Firestore); cancelling the task that
/// iterates ``Query/snapshots(includeMetadataChanges:)`` does.
public final class ListenerRegistration: Sendable {
    /// Unique for the life of the process (an object address could come back for a later registration).
    let id: UInt64
    private let gate = DeliveryGate()
    private let onRemove: @Sendable (UInt64) -> Void

    private static let counter = Atomic<UInt64>(0)

    /// A registration whose removal calls `onRemove` once, with its id.
    init(onRemove: @escaping @Sendable (UInt64) -> Void) {
        self.id = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        self.onRemove = onRemove
    }

    /// Stops delivery to this listener. If its callback is running on another thread, this waits for it to
    /// return (so call it from a callback, or from a thread that may wait, not while holding a lock the
    /// callback needs).
    public func remove() {
        if gate.close() { onRemove(id) }
    }

    /// Whether ``remove()`` was called.
    public var isRemoved: Bool { gate.isClosed }

    /// Runs `callback` unless the listener was removed, holding off `remove()` until it returns.
    func deliver(_ callback: () -> Void) {
        gate.pass(callback)
    }
}

/// A recursive lock around a flag: delivery holds it, so `remove()` from another thread waits for a callback in
/// progress, while `remove()` from inside the callback (same thread) goes straight through.
private final class DeliveryGate: @unchecked Sendable {
    private let lock = NSRecursiveLock()
    private var closed = false

    var isClosed: Bool { lock.withLock { closed } }

    /// Closes the gate; true the first time.
    func close() -> Bool {
        lock.withLock {
            defer { closed = true }
            return !closed
        }
    }

    func pass(_ body: () -> Void) {
        lock.withLock {
            if !closed { body() }
        }
    }
}
