package import DongneCore
package import DongneStore
import DongneNet
import DongneSystem

/// Storing what arrived from elsewhere, once ``Node/check(parsed:)`` checked it and listeners were shown it.
extension Node {
    /// Stores what ``check(parsed:)`` admitted; the results once it is on disk. The messages shown on arrival
    /// leave the arriving set once committed, or are withdrawn if the store fails; listeners have heard either
    /// by the time this returns.
    package func keep(_ admitted: AdmittedBatch) async -> [Result<(Document, InsertOutcome), IngestError>] {
        await withCheckedContinuation { continuation in keep(admitted) { continuation.resume(returning: $0) } }
    }

    /// ``keep(_:)`` without awaiting: queues the write and returns at once; listeners hear of the commit as soon
    /// as it is made, and `completion` the results once they are on disk, both on the node's loop (where the
    /// network and the hub run).
    ///
    /// A live message's own way runs no task and wakes no thread for its storing: received from others and
    /// shown from memory already, its commit may wait (see `Store.submit(_:deferrable:whenVisible:completion:)`),
    /// and the work that follows it (the listeners' bookkeeping, then `completion`) comes after the commit, when
    /// the message reached every listener of every process on the machine long ago. The store's threads hand
    /// both straight to the loop, in order: the commit is made visible before it is made durable.
    package func keep(
        _ admitted: AdmittedBatch,
        completion: @escaping @Sendable ([Result<(Document, InsertOutcome), IngestError>]) -> Void
    ) {
        let fresh = admitted.newDocuments
        let channels = admitted.newDocumentChannels
        // A name changed: conversations show names from the store's profiles.
        let renames = fresh.contains { if case .profile = $0.body { true } else { false } }
        let committed = Flag()
        // Its commit may wait when listeners see all of it already, from memory: only others' messages.
        let deferrable = !fresh.isEmpty
            && fresh.allSatisfy { document in
                guard case .message = document.body else { return false }
                return document.author != identity.publicKey
            }
        let (source, hub, loop) = (source, hub, loop)
        store.submit(admitted, deferrable: deferrable) {
            committed.set()
            source.arriving.remove(fresh)
            // Told at once, not when the commit is on disk: the hub takes a committed message off the arrivals
            // it showed without asking the store again only while no later arrival was shown meanwhile.
            if !channels.isEmpty { loop.execute { hub.assumeIsolated { $0.committed(fresh) } } }
            if renames { loop.execute { hub.assumeIsolated { $0.refreshDirect() } } }
        } completion: { results in
            loop.execute {
                if !committed.isSet && !fresh.isEmpty {
                    // Not stored after all: messages shown on arrival are withdrawn until their peers send them
                    // again.
                    source.arriving.remove(fresh)
                    hub.assumeIsolated { $0.refresh(channels: channels) }
                    if source.arrivingDirect.remove(carriedBy: fresh.map(\.id)) { hub.assumeIsolated { $0.refreshDirect() } }
                }
                // The user's own among new envelopes are found after they are stored and relayed.
                if committed.isSet && channels.contains(DirectSpace.id) { self.envelopesStored() }
                completion(results)
            }
        }
    }
}
