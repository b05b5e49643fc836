import Dongne
import DongneNet
import DongneTestSupport
import Foundation
import Synchronization
import Testing

@testable import dongne

/// The whole library through the local API: direct messages, photos, blocks, channels and peers, each checked
/// against what the node says in process. Blocking socket work runs off Swift's pool (`offPool`).
@Suite struct LocalAPILibraryTests {
    /// Two connected nodes; the first serves its library at a socket.
    struct Pair {
        let a: TestNode
        let b: TestNode
        let server: LocalAPIServer
        var path: String { a.directory + "/api.sock" }

        static func start() async throws -> Pair {
            let (a, b) = try await PhotoFixture.connectedPair()
            return Pair(a: a, b: b, server: try LocalAPIServer(node: a.node, path: a.directory + "/api.sock") { _ in })
        }

        func stop() {
            server.close()
            a.stop()
            b.stop()
        }
    }

    /// A program on A talks with B: its send shows in A's conversation as pending and reaches B; B's answer
    /// reaches the program's live listener; marking it read is a `modified` change; the list of conversations
    /// counts what is unread.
    @Test func aProgramSendsReceivesAndReadsDirectMessages() async throws {
        let pair = try await Pair.start()
        defer { pair.stop() }
        let (path, aKey, bKey) = (pair.path, pair.a.node.publicKey.fingerprint.full, pair.b.node.publicKey.fingerprint.full)
        let client = try await offPool { try SharedConnection(path: path) }
        let (listening, sent) = try await offPool { () throws -> (JSONObject, JSONObject) in
            let listening = try client.request(["op": "dm.listen", "with": bKey, "includeMetadataChanges": true])
            _ = try client.event { $0["event"] as? String == "snapshot" }
            return (listening, try client.request(["op": "dm.send", "to": bKey, "text": "안녕, 준호"]))
        }
        #expect(listening["ok"] as? Bool == true && sent["ok"] as? Bool == true, "\(listening.text) \(sent.text)")
        let document = try #require(sent["document"] as? [String: Any])
        #expect(document["text"] as? String == "안녕, 준호" && document["isOutgoing"] as? Bool == true)
        #expect(document["author"] as? String == aKey && document["correspondent"] as? String == bKey)

        let inB = pair.b.node.conversation(with: pair.a.node.publicKey)
        let received = try await DirectMessageTests.first(inB.messages.snapshots()) { $0.count == 1 }
        #expect(received.documents.first?.id.hex == document["id"] as? String)
        let reply = try await inB.send("반가워, 민지")

        let replyShown = try await offPool {
            try client.event { event in Self.changes(event).contains { ($0["document"] as? [String: Any])?["id"] as? String == reply.id.hex } }
        }
        let replyDocument = try #require(Self.changes(replyShown.fields).first { $0["type"] as? String == "added" }?["document"] as? [String: Any])
        #expect(replyDocument["isOutgoing"] as? Bool == false && replyDocument["isRead"] as? Bool == false)
        #expect(replyDocument["text"] as? String == "반가워, 민지")

        let (unread, read, readShown, after) = try await offPool {
            () throws -> (JSONObject, JSONObject, JSONObject, JSONObject) in
            let unread = try client.request(["op": "conversations"])
            let read = try client.request(["op": "dm.read", "with": bKey, "documents": [reply.id.hex]])
            let shown = try client.event { event in
                Self.changes(event).contains {
                    $0["type"] as? String == "modified" && ($0["document"] as? [String: Any])?["isRead"] as? Bool == true
                }
            }
            return (unread, read, shown, try client.request(["op": "conversations"]))
        }
        let unreadList = try #require(unread["documents"] as? [[String: Any]])
        let first = try #require(unreadList.first)
        let unreadCount = first["unreadCount"] as? Int
        let correspondent = first["correspondent"] as? String
        #expect(unreadList.count == 1 && unreadCount == 1, "\(unread.text)")
        #expect(correspondent == bKey)
        #expect(read["ok"] as? Bool == true && !Self.changes(readShown.fields).isEmpty)
        #expect((after["documents"] as? [[String: Any]])?.first?["unreadCount"] as? Int == 0)

        let history = try await offPool { try client.request(["op": "dm.history", "with": bKey, "limit": 10]) }
        let texts = (history["documents"] as? [[String: Any]])?.compactMap { $0["text"] as? String }
        #expect(texts == ["안녕, 준호", "반가워, 민지"])
    }

    /// Blocks through the socket: `blocked` lists the person, their conversation leaves the list, and
    /// `unblock` brings it back. A fingerprint that is not one is a `bad-request`.
    @Test func aProgramBlocksAndUnblocksAPerson() async throws {
        let pair = try await Pair.start()
        defer { pair.stop() }
        try await pair.b.node.conversation(with: pair.a.node.publicKey).send("광고입니다")
        let inA = pair.a.node.conversation(with: pair.b.node.publicKey)
        _ = try await DirectMessageTests.first(inA.messages.snapshots()) { $0.count == 1 }
        let (path, bKey) = (pair.path, pair.b.node.publicKey.fingerprint.full)
        let answers = try await offPool { () throws -> [JSONObject] in
            let client = try SharedConnection(path: path)
            return try [
                ["op": "block", "person": bKey], ["op": "blocked"], ["op": "conversations"],
                ["op": "unblock", "person": bKey], ["op": "blocked"], ["op": "conversations"],
                ["op": "block", "person": "not-a-fingerprint"],
            ].map { try client.request($0) }
        }
        #expect(answers[0]["ok"] as? Bool == true)
        #expect(answers[1]["people"] as? [String] == [bKey])
        #expect((answers[2]["documents"] as? [Any])?.isEmpty == true)
        #expect(answers[4]["people"] as? [String] == [])
        #expect((answers[5]["documents"] as? [Any])?.count == 1)
        #expect((answers[6]["error"] as? [String: Any])?["code"] as? String == "bad-request")
        #expect(try pair.a.node.blockedAuthors().isEmpty)
    }

    /// A program sends a photo by its file; the message lists it as available with its facts; `photo` gives its
    /// thumbnail (a JPEG); `photo.read` gives its bytes chunk by chunk, equal to what the node holds. A relative
    /// path is refused with what to do.
    @Test func aProgramSendsAPhotoAndReadsItBack() async throws {
        let served = try await ServedNode.start()
        defer { served.stop() }
        let fixture = try PhotoFixture.jpeg(width: 1200, height: 900, gps: true)
        defer { fixture.remove() }
        let path = served.path
        let (sent, relative) = try await offPool { () throws -> (JSONObject, JSONObject) in
            let client = try SharedConnection(path: path)
            let sent = try client.request(["op": "send", "channel": "서울특별시", "photo": fixture.path])
            return (sent, try client.request(["op": "send", "channel": "서울특별시", "photo": "사진.jpg"]))
        }
        #expect(sent["ok"] as? Bool == true, "\(sent.text)")
        #expect((relative["error"] as? [String: Any])?["message"] as? String == "photo is a file's absolute path: the node does not share your working directory")
        let id = try #require(sent["document"] as? String)
        let stored = try #require(try await served.test.node.channel(named: "서울특별시").messages.getDocuments().documents.first)
        guard case .photo(let hash) = stored.content else { throw DongneError.unknownMessage(stored.id) }
        #expect(stored.id.hex == id)

        let (history, photo, bytes) = try await offPool { () throws -> (JSONObject, JSONObject, [UInt8]) in
            let client = try SharedConnection(path: path)
            let history = try client.request(["op": "history", "channel": "서울특별시"])
            let photo = try client.request(["op": "photo", "photo": hash.raw.hex])
            var bytes: [UInt8] = []
            var chunk = 0, chunks = 1
            while chunk < chunks {
                let answer = try client.request(["op": "photo.read", "photo": hash.raw.hex, "chunk": chunk])
                chunks = answer["chunks"] as? Int ?? 0
                bytes += Data(base64Encoded: answer["data"] as? String ?? "").map { [UInt8]($0) } ?? []
                chunk += 1
            }
            return (history, photo, bytes)
        }
        let listed = try #require((history["documents"] as? [[String: Any]])?.first)
        let described = try #require(listed["photo"] as? [String: Any])
        #expect(listed["type"] as? String == "photo" && described["availability"] as? String == "available")
        #expect(described["hash"] as? String == hash.raw.hex && described["mediaType"] as? String == "image/jpeg")
        #expect(described["width"] as? Int == 1200 && described["height"] as? Int == 900)
        let thumbnail = Data(base64Encoded: photo["thumbnail"] as? String ?? "").map { [UInt8]($0) } ?? []
        #expect(thumbnail.starts(with: [0xFF, 0xD8]), "a JPEG thumbnail")
        #expect(bytes == (try served.test.node.photo(hash)), "the photo's bytes, chunk by chunk")
    }

    /// `channels`, `leave` and `peers` say what the node says in process; `channels.listen` hears a join.
    @Test func aProgramSeesChannelsAndPeers() async throws {
        let pair = try await Pair.start()
        defer { pair.stop() }
        _ = try await pair.a.node.join("서울특별시")
        let (path, bKey) = (pair.path, pair.b.node.publicKey.fingerprint.full)
        let client = try await offPool { try SharedConnection(path: path) }
        let (peers, listed, joined) = try await offPool { () throws -> (JSONObject, JSONObject, JSONObject) in
            let peers = try client.request(["op": "peers"])
            let listed = try client.request(["op": "channels"])
            _ = try client.request(["op": "channels.listen"])
            _ = try client.event { $0["event"] as? String == "snapshot" }
            _ = try client.request(["op": "join", "channel": "부산광역시"])
            let joined = try client.event { event in
                Self.changes(event).contains { ($0["document"] as? [String: Any])?["name"] as? String == "부산광역시" }
            }
            return (peers, listed, joined)
        }
        #expect((peers["peers"] as? [[String: Any]])?.map { $0["fingerprint"] as? String } == [bKey])
        let names = (listed["documents"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        let inProcess = try await pair.a.node.channels.getDocuments().documents.map(\.name)
        #expect(names == inProcess.filter { $0 != "부산광역시" } && names?.contains("서울특별시") == true)
        #expect(!Self.changes(joined.fields).isEmpty)
        let left = try await offPool { try client.request(["op": "leave", "channel": "부산광역시"]) }
        #expect(left["ok"] as? Bool == true)
        #expect(try await pair.a.node.channels.getDocuments().documents.first { $0.name == "부산광역시" }?.isJoined != true)
    }

    /// Every kind of document the API sends is written by hand exactly as the reference (Foundation) writes it.
    @Test func everyKindOfDocumentIsWrittenAsTheReferenceWritesIt() async throws {
        let pair = try await Pair.start()
        defer { pair.stop() }
        let conversation = pair.a.node.conversation(with: pair.b.node.publicKey)
        try await conversation.send("따옴표 \" 와 줄\n바꿈")
        _ = try await conversation.send(location: Location(latitude: 37.5759, longitude: 126.969))
        _ = try await pair.a.node.join("서울특별시")
        let messages = try await conversation.messages.getDocuments()
        let conversations = try await pair.a.node.conversations.getDocuments()
        let channels = try await pair.a.node.channels.getDocuments()
        try Self.expectSame(LocalAPIJSON.snapshotLine(messages, listener: 1), ReferenceJSON.snapshot(messages, listener: 1, ReferenceJSON.direct))
        try Self.expectSame(
            LocalAPIJSON.snapshotLine(conversations, listener: 2),
            ReferenceJSON.snapshot(conversations, listener: 2, ReferenceJSON.conversation))
        try Self.expectSame(LocalAPIJSON.snapshotLine(channels, listener: 3), ReferenceJSON.snapshot(channels, listener: 3, ReferenceJSON.channel))
    }

    static func expectSame(_ line: [UInt8], _ reference: [String: Any]) throws {
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line.dropLast())) as? NSDictionary)
        #expect(parsed == reference as NSDictionary, "\(String(decoding: line, as: UTF8.self))")
    }

    /// A connection whose answers and events cross threads as ``JSONObject``s.
    final class SharedConnection: Sendable {
        private let connection: LocalAPIConnection

        init(path: String) throws { connection = try LocalAPIConnection(path: path, patience: LocalAPIContractTests.patience) }

        func request(_ request: [String: Any]) throws -> JSONObject { try JSONObject(connection.request(request)) }

        func event(where matches: ([String: Any]) -> Bool) throws -> JSONObject {
            try JSONObject(connection.event(where: matches))
        }
    }

    /// A line the node sent, kept as its text so that it may cross threads.
    struct JSONObject: Sendable {
        let text: String

        init(_ object: [String: Any]) throws {
            text = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }

        var fields: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        }

        subscript(key: String) -> Any? { fields[key] }
    }

    /// The changes of a snapshot event (none for another event).
    static func changes(_ event: [String: Any]) -> [[String: Any]] {
        guard event["event"] as? String == "snapshot" else { return [] }
        return event["documentChanges"] as? [[String: Any]] ?? []
    }
}
