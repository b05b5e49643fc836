import DongneCore
import Foundation
import Testing

@testable import DongneStore

/// What the store answers from memory on a received message's way to listeners: never a wrong "no", never a
/// message shown plainly that the database would hide.
@Suite struct KnownDocumentsTests {
    /// Ids as uniform as real ones, and reproducible: BLAKE2b of a counter.
    static func ids(_ range: Range<Int>, salt: UInt8) -> [DocumentID] {
        range.map { DocumentID(BLAKE2b.hash256([salt] + withUnsafeBytes(of: $0.littleEndian, Array.init))) }
    }

    @Test func theFilterNeverForgetsAnIdAndRarelyClaimsOneItNeverSaw() {
        let filter = DocumentIDFilter(capacity: 0)
        let inserted = Self.ids(0..<200_000, salt: 1)  // beyond the first stage's 65,536: the filter grows
        for id in inserted { filter.insert(id) }
        let absent = Self.ids(0..<100_000, salt: 2)
        #expect(absent.allSatisfy(filter.mightContain), "until loaded, every answer is maybe")
        filter.finishLoading()
        #expect(inserted.allSatisfy(filter.mightContain))
        let falseMaybes = absent.filter(filter.mightContain).count
        #expect(falseMaybes < 2_000, "about 1% expected per stage, here \(falseMaybes) of 100,000")
        #expect(falseMaybes > 0, "a filter this full answers some maybes wrongly: else it is not a Bloom filter")
    }

    @Test func aReopenedStoreKnowsWhatItHeldOnceLoadedAndIsRightBeforeThat() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let stored = try message("저장됨"), report = try report(stored, by: Keys.bob)
        do {
            let store = try Store(path: directory.file("store.sqlite"))
            _ = try await store.insert([stored, report])
            store.close()
        }
        let store = try Store(path: directory.file("store.sqlite"))
        // Whether or not the background load has finished, a stored document is a duplicate.
        #expect(try await store.ingest(stored.bytes).1 == .duplicate)
        store.loadKnownDocuments()
        #expect(store.known.storedIDs.mightContain(stored.id))
        #expect(store.known.referencedIDs.mightContain(stored.id))
        #expect(!store.known.storedIDs.mightContain(try message("새 글").id))
        #expect(try await store.ingest(stored.bytes).1 == .duplicate)
        #expect(try store.arrivalShowing(of: stored.id, by: Keys.alice.publicKey) == .afterCommit)
        #expect(store.known.hasReported(Keys.bob.publicKey), "reporters are read when the store opens")
        store.close()
    }

    @Test func blocksAndUnblocksRacingLeaveMemoryAsTheDatabaseHasIt() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let author = Keys.carol.publicKey
        for round in 0..<40 {
            async let blocking: Void = store.block(author, since: UInt64(round))
            async let unblocking: Void = store.unblock(author)
            _ = try await (blocking, unblocking)
            #expect(store.known.isBlocked(author) == (try store.blockedAuthors().contains(author)), "round \(round)")
        }
        store.close()
    }

    @Test func arrivalsShowPlainlyOnlyWhenTheDatabaseWouldShowThemSo() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        store.loadKnownDocuments()
        let arriving = try message("도착", by: Keys.carol)
        #expect(try store.arrivalShowing(of: arriving.id, by: Keys.carol.publicKey) == .plain)

        try await store.block(Keys.carol.publicKey, since: 1)
        #expect(try store.arrivalShowing(of: arriving.id, by: Keys.carol.publicKey) == .afterCommit)
        try await store.unblock(Keys.carol.publicKey)
        #expect(try store.arrivalShowing(of: arriving.id, by: Keys.carol.publicKey) == .plain)

        _ = try await store.insert(try report(try message("다른 글"), by: Keys.carol))
        #expect(
            try store.arrivalShowing(of: arriving.id, by: Keys.carol.publicKey) == .plainByReporter,
            "carol reported: her first message in a channel makes that report count")

        _ = try await store.insert(try retract(arriving, by: Keys.carol))
        #expect(try store.arrivalShowing(of: arriving.id, by: Keys.carol.publicKey) == .afterCommit)
        store.close()
    }
}
