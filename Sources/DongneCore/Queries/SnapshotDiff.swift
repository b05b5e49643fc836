/// Computes the changes between two ordered result lists, and applies them: the core of every listener.
///
/// Documents are matched by `id`; a document present in both lists is `modified` when it is not equal (content
/// or metadata) or when it moved. Changes come in this order: every removal (in old order), then additions
/// and modifications in new order, so each index is valid when its change is applied.
public enum SnapshotDiff {
    /// The changes that turn `old` into `new`.
    ///
    /// Linear in the two lengths when the documents both lists hold keep their relative order, which is always
    /// so for queries ordered by an immutable key; a reordering falls back to a quadratic walk.
    @inlinable
    public static func changes<Item: Identifiable & Equatable & Sendable>(
        from old: [Item], to new: [Item]
    ) -> [DocumentChange<Item>] {
        slidWindowChanges(from: old, to: new) ?? matchedChanges(from: old, to: new)
    }

    /// What ``matchedChanges(from:to:)`` finds when `new` begins with the end of `old`: a window of the latest
    /// messages that slid as one arrived (its oldest left, the new one came in behind), or that stayed put. A
    /// live chat's every snapshot is one, so its documents are matched in place, id by id, with no hashing. Nil
    /// for any other pair, or when the check would take longer than the matching.
    @inlinable
    package static func slidWindowChanges<Item: Identifiable & Equatable & Sendable>(
        from old: [Item], to new: [Item]
    ) -> [DocumentChange<Item>]? {
        guard let first = new.first, let start = old.firstIndex(where: { $0.id == first.id }) else { return nil }
        let keptCount = old.count - start
        guard keptCount <= new.count, start * (new.count - keptCount) <= 64 else { return nil }
        for offset in 0..<keptCount where old[start + offset].id != new[offset].id { return nil }
        let (left, came) = (old[..<start], new[keptCount...])
        // One that left and came back in behind moved: the matching says so.
        for item in left where came.contains(where: { $0.id == item.id }) { return nil }
        var changes = left.map { DocumentChange(type: .removed, document: $0, oldIndex: 0, newIndex: -1) }
        for offset in 0..<keptCount where old[start + offset] != new[offset] {
            changes.append(DocumentChange(type: .modified, document: new[offset], oldIndex: offset, newIndex: offset))
        }
        for target in came.indices {
            changes.append(DocumentChange(type: .added, document: new[target], oldIndex: -1, newIndex: target))
        }
        return changes
    }

    /// The changes that turn `old` into `new`, for any two lists: documents matched by id through sets.
    @inlinable
    package static func matchedChanges<Item: Identifiable & Equatable & Sendable>(
        from old: [Item], to new: [Item]
    ) -> [DocumentChange<Item>] {
        let newIDs = Set(new.map(\.id))
        var changes: [DocumentChange<Item>] = []
        var kept: [Item] = []
        kept.reserveCapacity(min(old.count, new.count))
        for item in old {
            if newIDs.contains(item.id) {
                kept.append(item)
            } else {
                changes.append(DocumentChange(type: .removed, document: item, oldIndex: kept.count, newIndex: -1))
            }
        }
        let keptIDs = Set(kept.map(\.id))
        var next = 0  // the next kept document, in old order, expected at the current position
        for (target, item) in new.enumerated() {
            guard keptIDs.contains(item.id) else {
                changes.append(DocumentChange(type: .added, document: item, oldIndex: -1, newIndex: target))
                continue
            }
            guard kept[next].id == item.id else {
                return changes.filter { $0.type == .removed } + reordered(kept, new, keptIDs: keptIDs)
            }
            if kept[next] != item {
                changes.append(DocumentChange(type: .modified, document: item, oldIndex: target, newIndex: target))
            }
            next += 1
        }
        return changes
    }

    /// `documents` after applying `changes` in order, as the ``DocumentChange`` contract says.
    public static func apply<Item: Sendable>(_ changes: [DocumentChange<Item>], to documents: [Item]) -> [Item] {
        var result = documents
        for change in changes {
            switch change.type {
            case .added: result.insert(change.document, at: change.newIndex)
            case .removed: result.remove(at: change.oldIndex)
            case .modified:
                result.remove(at: change.oldIndex)
                result.insert(change.document, at: change.newIndex)
            }
        }
        return result
    }

    /// Additions and modifications when kept documents changed their relative order: walks the list as it is
    /// rebuilt, moving each document to its new index.
    @usableFromInline
    static func reordered<Item: Identifiable & Equatable & Sendable>(
        _ kept: [Item], _ new: [Item], keptIDs: Set<Item.ID>
    ) -> [DocumentChange<Item>] {
        var current = kept
        var changes: [DocumentChange<Item>] = []
        for (target, item) in new.enumerated() {
            guard keptIDs.contains(item.id) else {
                changes.append(DocumentChange(type: .added, document: item, oldIndex: -1, newIndex: target))
                current.insert(item, at: target)
                continue
            }
            let position = current[target...].firstIndex { $0.id == item.id }!
            guard position != target || current[position] != item else { continue }
            changes.append(DocumentChange(type: .modified, document: item, oldIndex: position, newIndex: target))
            current.remove(at: position)
            current.insert(item, at: target)
        }
        return changes
    }
}
