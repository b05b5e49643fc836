import Synchronization

/// A value behind a `Mutex`, shared by reference: for handing a result out of another thread's closure, or
/// for state read and changed from any thread. (A `Mutex` itself cannot be captured by an escaping closure.)
package final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    /// A value to share.
    package init(_ value: Value) { mutex = Mutex(value) }

    /// The value now.
    package func get() -> Value { mutex.withLock { $0 } }

    /// Replaces the value.
    package func set(_ newValue: Value) { mutex.withLock { $0 = newValue } }

    /// Reads and changes the value under the lock; what `body` returns.
    package func update<T: Sendable>(_ body: (inout Value) -> T) -> T {
        mutex.withLock { value in body(&value) }
    }
}
