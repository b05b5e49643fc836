import DongneCore
import DongneStore
import Testing

/// A channel's reconciliation items are read once, then kept up to date as documents commit: what a peer's
/// `reconcile` sees is always what a fresh read of the store would give, at the cost of an array copy.
@Suite struct ReconciliationItemsTests {
    @Test func theItemsKeptInMemoryMatchAFreshReadAfterEveryKindOfWrite() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"))
        _ = try await store.ingest(try message("가운데", at: 5_000).bytes)
        #expect(try store.reconciliationItems(in: Keys.seoul.id).count == 1)

        // Received documents before, after and between what is held, a duplicate, and a local write.
        let received = try [message("처음", at: 1_000), message("끝", at: 9_000), message("사이", by: Keys.bob, at: 5_000)]
        _ = await store.ingest(received.map(\.bytes) + [received[0].bytes])
        _ = try await store.insertLocal([try message("내 글", by: Keys.carol, at: 7_000)])

        let kept = try store.reconciliationItems(in: Keys.seoul.id)
        let reopened = try Store(path: directory.file("dongne.sqlite"))
        let fresh = try reopened.reconciliationItems(in: Keys.seoul.id)
        #expect(kept.count == 5)
        #expect(kept == fresh)
        #expect(kept == kept.sorted())
    }
}
