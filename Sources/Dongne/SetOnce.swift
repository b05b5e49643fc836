import Synchronization

/// A flag one thread sets and another reads later (the writer's thread tells whether a write was committed).
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)

    /// Sets it; for good.
    func set() { value.store(true, ordering: .releasing) }

    /// Whether it was set.
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// A value that one thread (the store's) provides once and one task awaits, without a task of its own in
/// between: awaiting it is not cancelled with the awaiting task, so what follows the store's answer always runs.
final class Promise<Value: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Value, Never>?)
        case done(Value)
    }

    private let state = Mutex<State>(.waiting(nil))

    /// Provides the value; only the first call counts.
    func fulfill(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard case .waiting(let waiter) = state else { return nil }
            state = .done(value)
            return waiter
        }
        waiter?.resume(returning: value)
    }

    /// The value, once provided. At most one task may await it.
    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Value? in
                    switch state {
                    case .waiting: state = .waiting(continuation); return nil
                    case .done(let value): return value
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
