/// Blobs between peers (PROTOCOL.md §3.4): serving what this node holds, within its budgets, and carrying out the
/// fetch core's directives.
extension PeerInstance {
    /// A `blob want` or `chunk request`: read from the store only within the host's chunk budget (each chunk
    /// asked for costs one token, a `blob want` one), so that a peer asking for everything costs a bounded amount
    /// of reading; the shell also declines while the peer's connection holds too much unsent.
    mutating func serveBlob(_ message: GossipMessage, to id: PeerID) {
        let (blob, cost): (BlobHash, Int)
        switch message {
        case .chunkRequest(let hash, let indexes): (blob, cost) = (hash, indexes.count)
        case .blobWant(let hash): (blob, cost) = (hash, 1)
        case .batch, .acknowledge, .channels, .reconcile, .request, .reconciled, .datagrams, .blobHave, .chunk,
            .listening, .membership:
            return
        }
        guard withinBudget(\.chunks, on: id, cost: cost) else { return }
        // The answer of a node that holds nothing of it, without reading the store.
        if hidesOwnPhoto(blob, from: id) { return send(.blobHave(blob, manifest: [], held: []), to: id) }
        output.append(.readBlob(message, for: id))
    }

    /// The shell's answer to a ``Directive/readBlob(_:for:)``.
    mutating func blobRead(_ messages: [GossipMessage]?, for id: PeerID) {
        guard let messages else { return ignoreOverBudget(on: id) }
        for message in messages { send(message, to: id) }
    }

    /// Hands an event to the fetch core and carries out what it says.
    mutating func followBlobs(_ event: BlobFetchInstance.Event) {
        for directive in blobs.handle(event, now: now) {
            switch directive {
            case .send(let message, let peer): send(message, to: peer)
            case .storeManifest(let manifest): output.append(.storeBlobManifest(manifest))
            case .storeChunk(let blob, let index, let bytes):
                output.append(.storeBlobChunk(blob, index: index, bytes: bytes))
            case .progress(let blob, let held, let count): output.append(.blobProgress(blob, held: held, of: count))
            case .completed(let blob): output.append(.blobCompleted(blob))
            case .heldBack(let blob): output.append(.blobHeldBack(blob))
            case .abandoned(let blob): output.append(.blobAbandoned(blob))
            case .misbehaved(let peer, let reason): closeForMisbehaviour(peer, reason)
            case .wake: break  // read below, after any event the directives above caused
            }
        }
        blobWake = blobs.nextWake
    }
}
