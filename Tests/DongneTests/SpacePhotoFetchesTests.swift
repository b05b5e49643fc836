import DongneCore
import Testing

@testable import Dongne

/// The sealed photos that envelopes name are fetched a few at a time, the user's own first, then the newest, and
/// one that ended without its photo is not asked for again at once: an envelope may name a photo nobody serves.
@Suite struct SpacePhotoFetchesTests {
    static func photo(_ byte: UInt8) -> SealedPhotoReference {
        SealedPhotoReference(hash: BlobHash(Bytes32([UInt8](repeating: byte, count: 32))!), size: 1_000)
    }

    @Test func atMostAFewRunTheUsersOwnFirstThenTheNewest() {
        let fetches = SpacePhotoFetches()
        let started = (1...6).flatMap { fetches.queue(Self.photo($0)) }
        #expect(started == (1...4).map(Self.photo))
        #expect(fetches.queue(Self.photo(1)).isEmpty, "running: not queued twice")
        #expect(fetches.queue(Self.photo(7), isOwn: true).isEmpty)
        #expect(fetches.ended(Self.photo(2).hash, gotIt: true) == [Self.photo(7)], "the user's own first")
        #expect(fetches.ended(Self.photo(3).hash, gotIt: true) == [Self.photo(6)], "then the newest")
        #expect(fetches.ended(Self.photo(9).hash).isEmpty, "not a fetch of a sealed photo: nothing changes")
        #expect(fetches.isRunning(Self.photo(6).hash) && !fetches.isRunning(Self.photo(2).hash))
    }

    @Test func oneThatEndedWithoutItsPhotoWaitsLongerEachTimeUnlessALargerSizeIsPaidFor() {
        let fetches = SpacePhotoFetches()
        let start = ContinuousClock.now
        let wait = SpacePhotoFetches.retryAfter
        #expect(fetches.queue(Self.photo(1), now: start) == [Self.photo(1)])
        _ = fetches.ended(Self.photo(1).hash, now: start)
        #expect(fetches.queue(Self.photo(1), now: start + .seconds(60)).isEmpty)
        #expect(fetches.queue(Self.photo(1), now: start + wait) == [Self.photo(1)])
        _ = fetches.ended(Self.photo(1).hash, now: start + wait)
        #expect(fetches.queue(Self.photo(1), now: start + wait * 2).isEmpty, "twice as long the second time")
        let larger = SealedPhotoReference(hash: Self.photo(1).hash, size: 5_000)
        #expect(fetches.queue(larger, now: start + wait * 2) == [larger], "an envelope paid for more bytes")
        _ = fetches.ended(larger.hash, asked: false, now: start + wait * 2)
        #expect(fetches.queue(larger, now: start + wait * 2) == [larger], "never started: no wait")
        #expect(fetches.overdue(now: start + wait * 2 + SpacePhotoFetches.maximumFetchTime) == [larger.hash])
    }
}
