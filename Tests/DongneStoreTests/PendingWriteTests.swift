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

    /// The writes to send a peer again: only pending ones, only in the channels asked for, the newest `limit`
    /// of them, oldest first.
    @Test func thePendingWritesToSendAgainAreTheNewestOnesInTheChannelsAskedFor() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        let busan = try ChannelName(normalizing: "부산광역시")
        #expect(try store.pendingWriteDocuments(in: [Keys.seoul.id], limit: 10).isEmpty)
        let mine = try (0..<4).map { try message("내 글 \($0)", at: 1_000 + UInt64($0)) }
        let elsewhere = try Document.sign(
            .message(Message(channel: busan.id, senderName: "민지", content: .text("부산에서"))), created: 1_010,
            by: Keys.alice)
        _ = try await store.insertLocal(mine.reversed() + [elsewhere])
        _ = try await store.insert(try message("남의 글", by: Keys.bob, at: 1_020))
        #expect(try await store.acknowledge([mine[3].id]) == [mine[3].id])
        let again = try store.pendingWriteDocuments(in: [Keys.seoul.id], limit: 2)
        #expect(again.map(\.id) == [mine[1].id, mine[2].id])
        #expect(again.map(\.bytes) == [mine[1].bytes, mine[2].bytes])
        let both = try store.pendingWriteDocuments(in: [busan.id, Keys.seoul.id], limit: 10)
        #expect(both.map(\.id) == [mine[0].id, mine[1].id, mine[2].id, elsewhere.id])
        store.close()
    }
}
