/// What a node answers a peer's `blob want` or `chunk request` with (PROTOCOL.md §3.4), from what it holds; the
/// same rule for the node's shell and the simulation.
public enum BlobAnswer {
    /// The answer to `request` for a blob of which the node holds `manifest` (nil: nothing of it) and the chunks
    /// `held`, reading chunk bytes with `chunk`. A `blob want` gets a `blob have` (both fields empty when the
    /// node holds nothing of the blob). A `chunk request` gets the chunks held among those asked for, in the order
    /// asked, and, when some were not held (or could not be read), a `blob have` saying what is, so that the
    /// asker corrects its picture instead of waiting for a timeout.
    public static func answer(
        _ request: GossipMessage, manifest: BlobManifest?, held: HeldChunks?, chunk: (Int) -> [UInt8]?
    ) -> [GossipMessage] {
        switch request {
        case .blobWant(let blob):
            return [have(blob, manifest: manifest, held: held)]
        case .chunkRequest(let blob, let indexes):
            var answers: [GossipMessage] = []
            var complete = true
            for index in indexes {
                guard held?.contains(index) == true, let bytes = chunk(index) else {
                    complete = false
                    continue
                }
                answers.append(.chunk(blob, index: index, bytes: bytes))
            }
            if !complete { answers.append(have(blob, manifest: manifest, held: held)) }
            return answers
        case .batch, .acknowledge, .channels, .reconcile, .request, .reconciled, .datagrams, .blobHave, .chunk,
            .listening, .membership:
            return []
        }
    }

    private static func have(_ blob: BlobHash, manifest: BlobManifest?, held: HeldChunks?) -> GossipMessage {
        guard let manifest, let held else { return .blobHave(blob, manifest: [], held: []) }
        return .blobHave(blob, manifest: manifest.bytes, held: held.bytes)
    }
}
