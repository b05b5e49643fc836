/// One live query, shared by every listener registered with the same query: it keeps the current results,
/// recomputes them when told to, and hands each listener the changes it asked for.
///
/// Owned by the ``ListenerHub`` actor and only touched there.
final class Observer<Document: SnapshotDocument> {
    /// Computes the current results; gets the previous ones to reuse what did not change.
    typealias Compute = (_ previous: [Document]) throws -> [Document]

    private struct Subscriber {
        let registration: ListenerRegistration
        let includeMetadataChanges: Bool
        let callback: @Sendable (QuerySnapshot<Document>?, (any Error)?) -> Void
        var deliveredMetadata: SnapshotMetadata
    }

    private let compute: Compute
    private let isFromCache: () -> Bool
    private(set) var documents: [Document]
    private var subscribers: [UInt64: Subscriber] = [:]

    /// Computes the first results.
    init(compute: @escaping Compute, isFromCache: @escaping () -> Bool) throws {
        self.compute = compute
        self.isFromCache = isFromCache
        self.documents = try compute([])
    }

    var isEmpty: Bool { subscribers.isEmpty }

    private var metadata: SnapshotMetadata {
        SnapshotMetadata(
            hasPendingWrites: documents.contains { $0.metadata.hasPendingWrites }, isFromCache: isFromCache())
    }

    /// Adds a listener and gives it its first snapshot: every document, as `added`.
    func add(
        _ registration: ListenerRegistration, includeMetadataChanges: Bool,
        callback: @escaping @Sendable (QuerySnapshot<Document>?, (any Error)?) -> Void
    ) {
        let metadata = metadata
        subscribers[registration.id] = Subscriber(
            registration: registration, includeMetadataChanges: includeMetadataChanges, callback: callback,
            deliveredMetadata: metadata)
        let changes = documents.enumerated().map {
            DocumentChange(type: .added, document: $1, oldIndex: -1, newIndex: $0)
        }
        let snapshot = QuerySnapshot(documents: documents, documentChanges: changes, metadata: metadata)
        registration.deliver { callback(snapshot, nil) }
    }

    func remove(_ registration: UInt64) {
        subscribers[registration] = nil
    }

    /// Recomputes the results and delivers what changed; on failure every listener gets the error and is
    /// removed (the caller drops the observer).
    func refresh() -> Bool {
        refresh(using: compute)
    }

    /// ``refresh()`` with another way to compute the results from the previous ones, for one time (an
    /// increment the caller knows to be all that changed).
    func refresh(using compute: Compute) -> Bool {
        let old = documents
        do { documents = try compute(old) } catch {
            for subscriber in subscribers.values {
                subscriber.registration.deliver { subscriber.callback(nil, error) }
                subscriber.registration.remove()
            }
            subscribers.removeAll()
            return false
        }
        deliver(SnapshotDiff.changes(from: old, to: documents), previous: old)
        return true
    }

    private func deliver(_ changes: [DocumentChange<Document>], previous: [Document]) {
        let metadata = metadata
        let dataChanges: [DocumentChange<Document>]
        if changes.contains(where: { $0.type == .modified }) {
            let previousByID = Dictionary(previous.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            dataChanges = changes.filter { !Self.isMetadataOnly($0, previous: previousByID) }
        } else {
            dataChanges = changes
        }
        // Written after the loop, and only where it changed: writing the table while iterating it would copy
        // the whole table on every delivery.
        var metadataDelivered: [UInt64] = []
        for (key, subscriber) in subscribers {
            let visible = subscriber.includeMetadataChanges ? changes : dataChanges
            let metadataChanged = subscriber.includeMetadataChanges && metadata != subscriber.deliveredMetadata
            guard !visible.isEmpty || metadataChanged else { continue }
            if metadata != subscriber.deliveredMetadata { metadataDelivered.append(key) }
            let snapshot = QuerySnapshot(documents: documents, documentChanges: visible, metadata: metadata)
            subscriber.registration.deliver { subscriber.callback(snapshot, nil) }
        }
        for key in metadataDelivered { subscribers[key]?.deliveredMetadata = metadata }
    }

    private static func isMetadataOnly(
        _ change: DocumentChange<Document>, previous: [Document.ID: Document]
    ) -> Bool {
        guard change.type == .modified, change.oldIndex == change.newIndex else { return false }
        return previous[change.document.id].map(change.document.hasSameData) ?? false
    }
}
