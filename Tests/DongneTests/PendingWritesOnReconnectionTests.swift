import DongneCore
import Foundation
import Testing

@testable import Dongne

/// A local write is pending until a peer acknowledges that it stored it, and a peer that comes back is sent
/// the writes still pending in the channels it carries, as a Firestore client sends its pending writes again
/// when it reconnects.
@Suite(.serialized) struct PendingWritesOnReconnectionTests {
    /// The peer stored the message, but its session ended before its acknowledgement came: the message stayed
    /// pending for good, since reconciliation sends a peer only what it lacks. A peer that comes back carrying
    /// the channel gets it again, acknowledges it, and it clears.
    @Test func aWriteWhoseAcknowledgementWasLostClearsWhenAPeerComesBack() async throws {
        let node = try await TestNode.start(name: "민지", listen: true)
        defer { node.stop() }
        let seoul = try await node.node.join("서울특별시")
        let port = try #require(node.node.listeningAddress?.split(separator: ":").last.flatMap { UInt16($0) })
        let key = SigningKey.generate()
        let silent = try await RawPeer(port: port, identity: key, keepsAlive: false)
        #expect(await silent.waitUntilEstablished())
        silent.send(.channels([seoul.id]))
        let id = try await seoul.send(.text("잘 받았나요"))
        #expect(await ReconnectionTests.eventually(seconds: 10) { Self.carries(silent.messages, id) })
        silent.close()  // gone before it acknowledged anything
        // Seen gone before the peer comes back: a session still up would hand what it owed to the new one as a
        // duplicate's (another path, tested elsewhere).
        #expect(await ReconnectionTests.eventually(seconds: 10) { await node.node.peers().isEmpty })

        let pending = try await seoul.messages.getDocuments()
        #expect(pending.documents.first { $0.id == id }?.metadata.hasPendingWrites == true)
        let back = try await RawPeer(port: port, identity: key)  // acknowledges every batch
        #expect(await back.waitUntilEstablished())
        back.send(.channels([seoul.id]))
        let cleared = try await DirectMessageTests.first(seoul.messages.snapshots(includeMetadataChanges: true)) {
            $0.documents.first { $0.id == id }?.metadata.hasPendingWrites == false
        }
        #expect(cleared.documents.contains { $0.id == id })
        #expect(Self.carries(back.messages, id), "sent again to the peer that came back")
    }

    /// Whether a batch among `messages` carries the document `id`.
    static func carries(_ messages: [GossipMessage], _ id: DocumentID) -> Bool {
        messages.contains { message in
            guard case .batch(_, let documents, _, _) = message else { return false }
            return documents.contains { (try? UnverifiedDocument(parsing: $0))?.id == id }
        }
    }
}
