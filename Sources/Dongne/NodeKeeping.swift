package import DongneCore
package import DongneStore

/// Storing what arrived from elsewhere, once ``Node/check(parsed:)`` checked it and listeners were shown it.
extension Node {
    /// Stores what ``check(parsed:)`` admitted; the results once it is on disk. The messages shown on arrival
    /// leave the arriving set once committed, or are withdrawn if the store fails; listeners have heard either
    /// by the time this returns.
    package func keep(_ admitted: AdmittedBatch) async -> [Result<(Document, InsertOutcome), IngestError>] {
        await withCheckedContinuation { continuation in keep(admitted) { continuation.resume(returning: $0) } }
    }

    /// ``keep(_:)`` without awaiting: queues the write and returns at once; listeners hear of the commit as soon
    /// as it is made, and `completion` the results once they are on disk, from a task of its own.
    ///
    /// A live message's own way runs no task and wakes no thread for its storing: received from others and
    /// shown from memory already, its commit may wait (see `Store.submit(_:deferrable:whenVisible:completion:)`),
    /// and the work that follows it (the listeners' bookkeeping, then `completion`) comes after the commit, when
    /// the message reached every listener of every process on the machine long ago.
    package func keep(
        _ admitted: AdmittedBatch,
        completion: @escaping @Sendable ([Result<(Document, InsertOutcome), IngestError>]) -> Void
    ) {
        let fresh = admitted.newDocuments
        let channels = admitted.newDocumentChannels
        let committed = Flag()
        // Its commit may wait when listeners see all of it already, from memory: only others' messages.
        let deferrable = !fresh.isEmpty
            && fresh.allSatisfy { document in
                guard case .message = document.body else { return false }
                return document.author != identity.publicKey
            }
        let (source, hub) = (source, hub)
        let listenersHeard = Promise<Void>()
        store.submit(admitted, deferrable: deferrable) {
            committed.set()
            source.arriving.remove(fresh)
            // Told at once, not when the commit is on disk: the hub takes a committed message off the arrivals
            // it showed without asking the store again only while no later arrival was shown meanwhile.
            Task {
                if !channels.isEmpty { await hub.committed(fresh) }
                listenersHeard.fulfill(())
            }
        } completion: { results in
            Task {
                if committed.isSet {
                    await listenersHeard.value
                } else if !fresh.isEmpty {
                    // Not stored after all: messages shown on arrival are withdrawn until their peers send them
                    // again.
                    source.arriving.remove(fresh)
                    await hub.refresh(channels: channels)
                }
                completion(results)
            }
        }
    }
}
