import DongneCore

/// This node's own documents of the last moments, for reconciliation: the store may hold a local message's
/// commit back for a few milliseconds (it shows from memory meanwhile, see `Node.publish(_:)`), and
/// reconciliation reads the store. A session that came up in those milliseconds, too late for the message's
/// gossip (which offers it only to peers known to carry its channel) and too early for its commit, would
/// otherwise be told the message does not exist, and get it only at the next anti-entropy round, 30 s later.
///
/// Only the latest ``capacity`` are kept: commits are held for milliseconds, so a few suffice, and those the
/// store is seen to hold are dropped as soon as a reconciliation reads them there.
struct RecentlyPublished {
    /// At most this many documents are kept.
    static let capacity = 64

    private var documents: [Document] = []

    /// Keeps `document`, published just now (the oldest kept goes when there are too many).
    mutating func add(_ document: Document) {
        if documents.count == Self.capacity { documents.removeFirst() }
        documents.append(document)
    }

    /// `stored`, the store's reconciliation items of `channel` (in order), with those of the documents kept here
    /// that it does not have yet, in order too. `stored` must be read after the kept documents were last added to
    /// (a commit between the two reads is in the store then); those the store has are not kept any longer.
    mutating func items(in channel: ChannelID, stored: [NegentropyItem]) -> [NegentropyItem] {
        guard documents.contains(where: { $0.channel == channel }) else { return stored }
        let storedIDs = Set(stored.map(\.id))
        documents.removeAll { $0.channel == channel && storedIDs.contains($0.id.bytes) }
        let missing = documents.filter { $0.channel == channel }.compactMap {
            NegentropyItem(timestamp: $0.created, id: $0.id.bytes)
        }
        return missing.isEmpty ? stored : (stored + missing).sorted()
    }

    /// Forgets the document with `id`: its commit failed, so it is not this node's to offer.
    mutating func forget(_ id: DocumentID) {
        documents.removeAll { $0.id == id }
    }

    /// The kept documents in `channels`, oldest first, to send beside those read from the store: those whose
    /// commit is still held back are only here (some kept ones may be committed by now).
    func gossipDocuments(in channels: Set<ChannelID>) -> [GossipDocument] {
        documents.filter { $0.channel.map(channels.contains) ?? false }.map {
            GossipDocument(id: $0.id, bytes: $0.bytes)
        }
    }

    /// The kept documents among `ids`, to offer a peer beside those read from the store.
    func gossipDocuments(_ ids: some Sequence<DocumentID>) -> [GossipDocument] {
        let wanted = Set(ids)
        return documents.filter { wanted.contains($0.id) }.map { GossipDocument(id: $0.id, bytes: $0.bytes) }
    }
}
