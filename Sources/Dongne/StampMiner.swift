import DongneCore
import DongneSystem
import Foundation  // Thread
import Synchronization

/// Searches for an identity stamp on several `dongne-stamp` threads at once, and finds the one
/// ``IdentityStamp/mine(for:strength:)`` finds: the first counter from 0 that is strong enough.
///
/// The counters are searched in rounds of `lanes` × 16,384, each lane taking every `lanes`-th counter of a round. A
/// lane that finds one stops, and the others stop once past that round: the smallest counter any of them found is
/// then the first of all, whichever lane was quickest. Each thread runs at background priority (a tenth of the
/// network thread's share, `prepareBackgroundThread`) and ends when the search does, or when ``cancel()`` is
/// called.
final class StampMiner: Sendable {
    private let stopped = Mutex(false)

    /// Stops every search of this miner at its next round; those searches find nothing.
    func cancel() { stopped.withLock { $0 = true } }

    /// A stamp of at least `strength` (at most ``IdentityStamp/maximumUsefulStrength``) for `author`, searched on
    /// `lanes` threads; nil if the miner was cancelled first.
    func mine(for author: PublicKey, strength: Int, lanes: Int) async -> IdentityStamp? {
        let strength = min(max(0, strength), IdentityStamp.maximumUsefulStrength)
        let search = Search(lanes: UInt64(max(1, lanes)))
        return await withCheckedContinuation { continuation in
            for lane in 0..<search.lanes {
                Thread { [self] in
                    prepareBackgroundThread(named: "dongne-stamp")
                    let found = searchLane(lane, of: search, for: author, strength: strength)
                    if let last = search.finish(lane: found) { continuation.resume(returning: last) }
                }.start()
            }
        }
    }

    /// Searches one lane round by round, until it finds a stamp, another lane found one in an earlier round, or
    /// the miner is cancelled; the counter found and its round.
    private func searchLane(
        _ lane: UInt64, of search: Search, for author: PublicKey, strength: Int
    ) -> (counter: UInt64, round: UInt64)? {
        let batch: UInt64 = 1 << 14
        var round: UInt64 = 0
        while !stopped.withLock({ $0 }), search.goesOn(at: round) {
            let first = round &* batch &* search.lanes &+ lane
            let stride = search.lanes
            let found = IdentityStamp.search(
                for: author, strength: strength, first: first, stride: stride, count: batch)
            if let found { return (found.counter, round) }
            round &+= 1
        }
        return nil
    }

    /// What the lanes of one search found so far.
    private final class Search: Sendable {
        let lanes: UInt64
        private let state: Mutex<(firstRound: UInt64?, found: [UInt64], running: UInt64)>

        init(lanes: UInt64) {
            self.lanes = lanes
            state = Mutex((nil, [], lanes))
        }

        /// Whether a lane at `round` should go on: no lane found a stamp in an earlier round.
        func goesOn(at round: UInt64) -> Bool { state.withLock { $0.firstRound.map { round <= $0 } ?? true } }

        /// Notes what a lane found as it ends; once every lane has ended, the search's answer (wrapped: nil
        /// inside when nothing was found), else nil.
        func finish(lane found: (counter: UInt64, round: UInt64)?) -> IdentityStamp?? {
            state.withLock { state in
                if let found {
                    state.found.append(found.counter)
                    state.firstRound = min(state.firstRound ?? found.round, found.round)
                }
                state.running -= 1
                guard state.running == 0 else { return nil }
                return .some(state.found.min().map(IdentityStamp.init(counter:)))
            }
        }
    }
}
