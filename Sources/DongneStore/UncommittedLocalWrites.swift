package import DongneCore
import DongneSystem

/// The local writes queued for the store's writer and not committed yet (a held deferrable commit, say), counted
/// per document: one queued twice stays uncommitted until both writes have committed or failed. `Store.clearPending`
/// asks it whether its own write may be held.
package final class UncommittedLocalWrites: Sendable {
    private let counts = Locked<[DocumentID: Int]>([:])

    /// None queued.
    package init() {}

    /// Counts a write of `ids` as queued. The closure returned counts it as done (committed, or failed) the first
    /// time it is called and does nothing after: the writer calls a write's `visible` and then its completion,
    /// or only its completion when it fails.
    package func queue(_ ids: [DocumentID]) -> @Sendable () -> Void {
        counts.update { counts in for id in ids { counts[id, default: 0] += 1 } }
        let done = Locked(false)
        return { [counts] in
            let first = done.update { done in
                defer { done = true }
                return !done
            }
            guard first else { return }
            counts.update { counts in
                for id in ids {
                    let left = (counts[id] ?? 1) - 1
                    counts[id] = left > 0 ? left : nil
                }
            }
        }
    }

    /// Whether none of `ids` waits for its commit.
    package func noneOf(_ ids: [DocumentID]) -> Bool {
        counts.update { counts in ids.allSatisfy { counts[$0] == nil } }
    }
}
