import Foundation

/// A value behind a lock, for handing a result out of the writer thread's closure, or for state read and
/// changed from any thread.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func update<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}
