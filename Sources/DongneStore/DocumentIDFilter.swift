import DongneCore
import Synchronization

/// A Bloom filter of document ids, in memory: "certainly not in the set" without a query.
///
/// The store keeps one of every id it has stored, so that a document received from a peer, which is nearly
/// always new, goes to its signature check without a read of the database first (a read right after another
/// connection wrote costs tens of microseconds: SQLite drops its page cache and locks the file). A "maybe"
/// still asks the database; a false "maybe" only costs that query.
///
/// Ids are BLAKE2b outputs, uniform already, so the probes are taken from the id's own bytes (Kirsch and
/// Mitzenmacher's double hashing: probe *i* is h₁ + i·h₂). The filter grows as a scalable Bloom filter does
/// (Almeida et al., 2007): when one stage holds as many ids as it was sized for, a stage twice as large starts,
/// and an id may be in any of them. Each stage has 10 bits per id and 7 probes, about 1% false "maybe"s.
///
/// Until ``finishLoading()``, every answer is "maybe": the ids stored before the filter existed are not all in
/// it yet. Ids are never removed (documents are never deleted).
final class DocumentIDFilter: Sendable {
    private struct Stage {
        var words: [UInt64]
        let mask: UInt64
        let capacity: Int
        var count = 0

        init(capacity: Int) {
            var bits = 64
            while bits < capacity * DocumentIDFilter.bitsPerID { bits *= 2 }
            words = Array(repeating: 0, count: bits / 64)
            mask = UInt64(bits - 1)
            self.capacity = capacity
        }

        mutating func insert(_ probes: (UInt64, UInt64)) {
            for index in 0..<DocumentIDFilter.probeCount {
                let bit = (probes.0 &+ UInt64(index) &* probes.1) & mask
                words[Int(bit >> 6)] |= 1 << (bit & 63)
            }
            count += 1
        }

        func contains(_ probes: (UInt64, UInt64)) -> Bool {
            for index in 0..<DocumentIDFilter.probeCount {
                let bit = (probes.0 &+ UInt64(index) &* probes.1) & mask
                if words[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { return false }
            }
            return true
        }
    }

    private struct State {
        var stages: [Stage]
        var isLoaded = false
    }

    static let bitsPerID = 10
    static let probeCount = 7
    private let state: Mutex<State>

    /// An empty filter, its first stage sized for `capacity` ids (at least 65,536).
    init(capacity: Int) {
        state = Mutex(State(stages: [Stage(capacity: max(capacity, 65_536))]))
    }

    /// Adds an id (before its document is committed, so that a stored id is never missing).
    func insert(_ id: DocumentID) {
        let probes = Self.probes(of: id)
        while true {
            let grownCapacity: Int? = state.withLock { state in
                let last = state.stages.count - 1
                guard state.stages[last].count >= state.stages[last].capacity else {
                    state.stages[last].insert(probes)
                    return nil
                }
                return state.stages[last].capacity * 2
            }
            guard let grownCapacity else { return }
            // A full stage: the next one (megabytes, zeroed) is made outside the lock the receive path takes.
            let stage = Stage(capacity: grownCapacity)
            state.withLock { state in
                let last = state.stages[state.stages.count - 1]
                if last.count >= last.capacity { state.stages.append(stage) }  // unless another insert did
            }
        }
    }

    /// Every id stored before the filter existed has been inserted: "no" answers are certain from now on.
    func finishLoading() {
        state.withLock { $0.isLoaded = true }
    }

    /// False only if `id` was certainly never inserted.
    func mightContain(_ id: DocumentID) -> Bool {
        let probes = Self.probes(of: id)
        return state.withLock { state in
            !state.isLoaded || state.stages.contains { $0.contains(probes) }
        }
    }

    /// h₁ and h₂ from the id's first 16 bytes; h₂ odd, so that the probes of a power-of-two table differ.
    private static func probes(of id: DocumentID) -> (UInt64, UInt64) {
        let (first, second) = id.raw.leadingWords
        return (first, second | 1)
    }
}
