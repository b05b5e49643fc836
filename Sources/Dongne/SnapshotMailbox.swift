import Synchronization

/// Where a listener's snapshots wait for an asynchronous consumer (``QuerySnapshot/stream(_:)``): at most one.
///
/// A consumer slower than the changes does not make the node hold every snapshot it has not taken. While it is
/// busy, each new snapshot replaces the waiting one, its changes computed again from the documents the consumer
/// last took (``SnapshotDiff``), so that what it takes still applies, change by change, to what it has: memory is
/// one snapshot whatever the rate, and no change is lost from the documents the consumer ends up with. A merged
/// snapshot that changes nothing and says nothing new about metadata is not delivered at all.
final class SnapshotMailbox<Document: SnapshotDocument>: Sendable {
    private struct State {
        var delivered: [Document] = []
        var deliveredMetadata: SnapshotMetadata?
        var waiting: QuerySnapshot<Document>?
        var consumer: CheckedContinuation<QuerySnapshot<Document>?, any Error>?
        var failure: (any Error)?
        var ended = false
        var registration: ListenerRegistration?
    }

    private let state = Mutex(State())

    /// Keeps the registration to remove when the consumer goes away.
    func hold(_ registration: ListenerRegistration) {
        let keep = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.registration = registration
            return true
        }
        if !keep { registration.remove() }
    }

    /// What the listener got: a snapshot, or the error that ended it.
    func receive(_ snapshot: QuerySnapshot<Document>?, _ error: (any Error)?) {
        let (consumer, handOver) = state.withLock { state -> (CheckedContinuation<QuerySnapshot<Document>?, any Error>?, QuerySnapshot<Document>?) in
            guard !state.ended else { return (nil, nil) }
            guard let snapshot else {
                state.failure = error
                return (nil, nil)
            }
            if let consumer = state.consumer {
                state.consumer = nil
                (state.delivered, state.deliveredMetadata) = (snapshot.documents, snapshot.metadata)
                return (consumer, snapshot)
            }
            state.waiting = Self.merged(state.waiting, snapshot, since: state.delivered, state.deliveredMetadata)
            return (nil, nil)
        }
        if let consumer { consumer.resume(returning: handOver) }
        if snapshot == nil { failWaitingConsumer() }
    }

    /// The next snapshot, waiting for one; nil once the consumer's task is cancelled.
    func next() async throws -> QuerySnapshot<Document>? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let result = state.withLock { state -> Result<QuerySnapshot<Document>?, any Error>? in
                    if let waiting = state.waiting {
                        state.waiting = nil
                        (state.delivered, state.deliveredMetadata) = (waiting.documents, waiting.metadata)
                        return .success(waiting)
                    }
                    if let failure = state.failure { return .failure(failure) }
                    if state.ended { return .success(nil) }
                    state.consumer = continuation
                    return nil
                }
                if let result { continuation.resume(with: result) }
            }
        } onCancel: {
            end()
        }
    }

    /// The consumer is gone: the listener is removed and a waiting `next()` ends.
    func end() {
        let (registration, consumer) = state.withLock { state in
            state.ended = true
            defer { (state.registration, state.consumer, state.waiting) = (nil, nil, nil) }
            return (state.registration, state.consumer)
        }
        registration?.remove()
        consumer?.resume(returning: nil)
    }

    deinit { end() }

    private func failWaitingConsumer() {
        let (consumer, failure) = state.withLock { state in
            defer { state.consumer = nil }
            return (state.consumer, state.failure)
        }
        if let consumer, let failure { consumer.resume(throwing: failure) }
    }

    /// `next` in place of the snapshot still waiting (if any), its changes counted from `delivered`; nil when that
    /// leaves nothing to say.
    private static func merged(
        _ waiting: QuerySnapshot<Document>?, _ next: QuerySnapshot<Document>, since delivered: [Document],
        _ deliveredMetadata: SnapshotMetadata?
    ) -> QuerySnapshot<Document>? {
        guard waiting != nil else { return next }
        let changes = SnapshotDiff.changes(from: delivered, to: next.documents)
        if changes.isEmpty, next.metadata == deliveredMetadata { return nil }
        return QuerySnapshot(documents: next.documents, documentChanges: changes, metadata: next.metadata)
    }
}
