import DongneCore
import Synchronization

/// Each reconciled channel's items, (created, id) in protocol order, kept in memory once loaded and updated as
/// documents commit: a peer's `reconcile` opening costs a copy of an array, not a read of the whole channel
/// (an attack of 200 openings a second on a channel of 80,000 documents pinned the loop reloading it).
///
/// A channel is loaded while the lock is held, so a document that commits meanwhile is added after the load,
/// and one the load already read is not added twice. Only channels someone reconciles are held: the node
/// answers only for the channels it carries.
final class ReconciliationItems: Sendable {
    private let channels = Mutex<[ChannelID: [NegentropyItem]]>([:])
    /// Documents left out of every set for now (the node's own envelopes before their stem has spread them).
    private let withheld = Mutex<Set<[UInt8]>>([])

    /// No channel loaded yet.
    init() {}

    /// The items of `channel`, loaded by `load` the first time.
    func items(
        in channel: ChannelID, load: () throws(StoreError) -> [NegentropyItem]
    ) throws(StoreError) -> [NegentropyItem] {
        let items = try channels.withLock { (cached) throws(StoreError) -> [NegentropyItem] in
            if let items = cached[channel] { return items }
            let items = try load()
            cached[channel] = items
            return items
        }
        let withheld = self.withheld.withLock { $0 }
        return withheld.isEmpty ? items : items.filter { !withheld.contains($0.id) }
    }

    /// Leaves `id` out of every set until ``release(_:)``.
    func withhold(_ id: DocumentID) { _ = withheld.withLock { $0.insert(id.bytes) } }

    /// Puts `id` back in its channel's set.
    func release(_ id: DocumentID) { _ = withheld.withLock { $0.remove(id.bytes) } }

    /// Adds documents that committed, in the channels loaded so far.
    func add(_ documents: [Document]) {
        channels.withLock { cached in
            for document in documents {
                guard let channel = document.channel, cached[channel] != nil,
                    let item = NegentropyItem(timestamp: document.created, id: document.id.bytes)
                else { continue }
                cached[channel]!.insertSorted(item)
            }
        }
    }

    /// Removes deleted documents of `channel`, if it is loaded.
    func remove(_ ids: [DocumentID], from channel: ChannelID) {
        let removed = Set(ids.map(\.bytes))
        channels.withLock { cached in cached[channel]?.removeAll { removed.contains($0.id) } }
    }
}

extension Array where Element == NegentropyItem {
    /// Inserts `item` in order, unless it is there already. New documents are mostly the latest, so the search
    /// starts from the end.
    fileprivate mutating func insertSorted(_ item: NegentropyItem) {
        if let last, last < item { return append(item) }
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < item { low = middle + 1 } else { high = middle }
        }
        if low < count && self[low] == item { return }
        insert(item, at: low)
    }
}
