import DongneCore
import Testing

@testable import Dongne

/// The sealed photos that envelopes name are fetched a few at a time, in order, and one that ended without its
/// photo is not asked for again at once: an envelope may name a photo nobody serves.
@Suite struct SpacePhotoFetchesTests {
    static func photo(_ byte: UInt8) -> SealedPhotoReference {
        SealedPhotoReference(hash: BlobHash(Bytes32([UInt8](repeating: byte, count: 32))!), size: 1_000)
    }

    @Test func atMostAFewRunAndTheRestWaitInOrder() {
        let fetches = SpacePhotoFetches()
        let started = (1...6).flatMap { fetches.queue(Self.photo($0)) }
        #expect(started == (1...4).map(Self.photo))
        #expect(fetches.queue(Self.photo(1)).isEmpty, "running: not queued twice")
        #expect(fetches.ended(Self.photo(2).hash) == [Self.photo(5)])
        #expect(fetches.ended(Self.photo(9).hash).isEmpty, "not a fetch of a sealed photo: nothing changes")
        #expect(fetches.isRunning(Self.photo(5).hash) && !fetches.isRunning(Self.photo(2).hash))
    }

    @Test func oneThatEndedIsAskedForAgainOnlyAfterAWhileUnlessItNeverStarted() {
        let fetches = SpacePhotoFetches()
        let start = ContinuousClock.now
        #expect(fetches.queue(Self.photo(1), now: start) == [Self.photo(1)])
        _ = fetches.ended(Self.photo(1).hash, now: start)
        #expect(fetches.queue(Self.photo(1), now: start + .seconds(60)).isEmpty)
        #expect(fetches.queue(Self.photo(1), now: start + SpacePhotoFetches.retryAfter) == [Self.photo(1)])
        _ = fetches.ended(Self.photo(1).hash, asked: false, now: start + SpacePhotoFetches.retryAfter)
        #expect(fetches.queue(Self.photo(1), now: start + SpacePhotoFetches.retryAfter) == [Self.photo(1)])
    }
}
