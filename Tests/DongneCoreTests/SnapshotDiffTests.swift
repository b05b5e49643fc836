import DongneCore
import Testing

@Suite struct SnapshotDiffTests {
    struct Item: Identifiable, Equatable, Sendable {
        let id: Int
        let version: Int
    }

    static func randomList(_ random: inout SplitMix64, shuffled: Bool) -> [Item] {
        var ids = Array(0..<12).filter { _ in Bool.random(using: &random) }
        if shuffled { ids.shuffle(using: &random) }
        return ids.map { Item(id: $0, version: Int.random(in: 0..<2, using: &random)) }
    }

    @Test("applying the changes to the old list gives the new one, in order or reordered", arguments: [false, true])
    func changesApply(reordered: Bool) {
        var random = SplitMix64(seed: reordered ? 2 : 1)
        for _ in 0..<2_000 {
            let old = Self.randomList(&random, shuffled: reordered)
            let new = Self.randomList(&random, shuffled: reordered)
            let changes = SnapshotDiff.changes(from: old, to: new)
            #expect(SnapshotDiff.apply(changes, to: old) == new)
            let removals = changes.prefix { $0.type == .removed }
            #expect(changes.dropFirst(removals.count).allSatisfy { $0.type != .removed }, "removals come first")
            #expect(
                changes.filter { $0.type == .modified }.allSatisfy {
                    old.contains($0.document) == false || $0.oldIndex != $0.newIndex
                })
        }
    }

    @Test func aWindowThatSlidGetsTheChangesTheMatchingFinds() {
        var random = SplitMix64(seed: 3)
        var slid = 0
        for _ in 0..<5_000 {
            // A window of ids over 0..<40: it moves on by 0 to 3, may lose or gain some, and versions change.
            let start = Int.random(in: 0..<20, using: &random)
            let old = (start..<(start + Int.random(in: 0..<12, using: &random))).map {
                Item(id: $0, version: Int.random(in: 0..<2, using: &random))
            }
            let newStart = start + Int.random(in: 0..<4, using: &random)
            var newIDs = Array(newStart..<(newStart + Int.random(in: 0..<12, using: &random)))
            if Int.random(in: 0..<4, using: &random) == 0, let moved = old.first, !newIDs.contains(moved.id) {
                newIDs.append(moved.id)  // left the front, came back in behind
            }
            if Int.random(in: 0..<4, using: &random) == 0 { newIDs.shuffle(using: &random) }
            let new = newIDs.map { Item(id: $0, version: Int.random(in: 0..<2, using: &random)) }
            let fast = SnapshotDiff.slidWindowChanges(from: old, to: new)
            if let fast {
                slid += 1
                #expect(fast == SnapshotDiff.matchedChanges(from: old, to: new), "\(old.map(\.id)) → \(newIDs)")
            }
            #expect(SnapshotDiff.apply(SnapshotDiff.changes(from: old, to: new), to: old) == new)
        }
        #expect(slid > 1_000, "the pairs include many windows that slid")
    }

    @Test func unchangedListsHaveNoChangesAndFirstSnapshotsAreAllAdded() {
        let items = (0..<5).map { Item(id: $0, version: 0) }
        #expect(SnapshotDiff.changes(from: items, to: items).isEmpty)
        let first = SnapshotDiff.changes(from: [], to: items)
        #expect(first.map(\.type) == Array(repeating: .added, count: 5))
        #expect(first.map(\.newIndex) == Array(0..<5))
    }
}
