import DongneCore
import DongneStore
import Foundation
import Testing

/// A local write is pending until a peer acknowledges it; acknowledgements are told apart in memory.
@Suite struct PendingWriteTests {
    static func pendingIDs(_ store: Store, channel: ChannelID) throws -> [DocumentID] {
        try store.messageRows(MessageQuery(channel: channel), viewer: Keys.alice.publicKey, policy: .init())
            .filter(\.isPending).map(\.id)
    }

    @Test func anAcknowledgementThatOvertakesTheCommitStillClearsTheWrite() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let document = try message("빨리 온 확인")
        // Queued, and (as the node does) sent at once: the peer's acknowledgement may come before the commit.
        let stored = AsyncStream<Void>.makeStream()
        store.submitLocal([document]) { _ in stored.continuation.finish() }
        #expect(try await store.acknowledge([document.id]) == [document.id])
        for await _ in stored.stream {}
        #expect(try Self.pendingIDs(store, channel: Keys.seoul.id).isEmpty)
        store.close()
    }

    @Test func acknowledgementsOfOthersDocumentsWriteNothing() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let mine = try message("내 글")
        let forwarded = try message("남의 글")
        _ = try await store.insertLocal([mine])
        _ = try await store.insert(forwarded)
        let before = store.statistics.transactions
        #expect(try await store.acknowledge([forwarded.id]) == [])
        #expect(store.statistics.transactions == before, "nothing pending among them: no transaction, no fsync")
        #expect(try Self.pendingIDs(store, channel: Keys.seoul.id) == [mine.id])
        store.close()

        let reopened = try Store(path: directory.file("store.sqlite"))
        #expect(try await reopened.acknowledge([mine.id, forwarded.id]) == [mine.id], "pending state survives")
        #expect(try Self.pendingIDs(reopened, channel: Keys.seoul.id).isEmpty)
        reopened.close()
    }
}
