import DongneStore
import Foundation
import Testing

@testable import Dongne

/// Random sequences of writes, reports, retracts, blocks and unblocks, seeded, against a reference model of
/// PROTOCOL.md §1.11 and the query semantics: after every step, every listener's latest snapshot is what the
/// model says, and its changes turn the previous snapshot into it.
@Suite struct ListenerPropertyTests {
    static let cases = 200
    static let stepsPerCase = 20

    @Test("listeners agree with the reference model", arguments: 0..<cases)
    func randomHistory(seed: Int) async throws {
        let test = try await TestNode.start(threshold: 2)
        defer { test.stop() }
        var random = SplitMix64(seed: UInt64(seed) &* 0x9e37_79b9 &+ 17)
        var world = try World(node: test.node)
        let watched = try await world.startListeners(count: 4, using: &random)
        for step in 0..<Self.stepsPerCase {
            let action = try await world.randomStep(using: &random)
            for (index, listener) in watched.enumerated() {
                let snapshots = listener.recorder.all
                let expected = world.model.evaluate(listener.spec)
                let actual = snapshots.last?.documents.map {
                    ModelRow(id: $0.id, reportCount: $0.reportCount, isActive: $0.isActive)
                }
                #expect(
                    actual == expected, "seed \(seed), step \(step) (\(action)), listener \(index): \(listener.spec)")
                if snapshots.count >= 2 {
                    let previous = snapshots[snapshots.count - 2], latest = snapshots[snapshots.count - 1]
                    let applied = SnapshotDiff.apply(latest.documentChanges, to: previous.documents)
                    #expect(applied == latest.documents, "seed \(seed), step \(step): changes do not apply")
                }
            }
        }
        for listener in watched { listener.registration.remove() }
    }
}

struct ModelRow: Equatable, CustomStringConvertible {
    let id: DocumentID
    let reportCount: Int
    let isActive: Bool
    var description: String { "\(id)·\(reportCount)\(isActive ? "" : "✗")" }
}

struct Watched {
    let spec: MessageQuery
    let recorder: Recorder<MessageSnapshot>
    let registration: ListenerRegistration
}

/// The node under test, the people around it, and the model of what the node should show.
struct World {
    let node: Node
    let seoul: Channel
    let busan: Channel
    var model: Model
    let others = [Others.bob, Others.carol, Others.dave, Others.erin]

    init(node: Node) throws {
        self.node = node
        seoul = try node.channel(named: "서울특별시")
        busan = try node.channel(named: "부산광역시")
        model = Model(viewer: node.publicKey, threshold: 2)
    }

    /// A position between messages: a time slot messages use, and a random id to break the tie either way.
    static func randomCursor(using random: inout SplitMix64) -> SortKey {
        let id = DocumentID(BLAKE2b.hash256((0..<8).map { _ in UInt8.random(in: 0...255, using: &random) }))
        return SortKey(created: Model.time(Int.random(in: 0..<10, using: &random)), id: id)
    }

    func startListeners(count: Int, using random: inout SplitMix64) async throws -> [Watched] {
        var watched: [Watched] = []
        for _ in 0..<count {
            var spec = MessageQuery(channel: seoul.id)
            if Bool.random(using: &random) { spec.isActive = Bool.random(using: &random) }
            if Int.random(in: 0..<4, using: &random) == 0 {
                spec.author = others.randomElement(using: &random)!.publicKey
            }
            if Int.random(in: 0..<4, using: &random) == 0 {
                spec.type = MessageType.allCases.randomElement(using: &random)
            }
            spec.isOrdered = true
            spec.descending = Bool.random(using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: spec.limit = .first(Int.random(in: 1...4, using: &random))
            case 1: spec.limit = .last(Int.random(in: 1...4, using: &random))
            default: break
            }
            if Int.random(in: 0..<4, using: &random) == 0 { spec.startAfter = Self.randomCursor(using: &random) }
            if Int.random(in: 0..<4, using: &random) == 0 { spec.endBefore = Self.randomCursor(using: &random) }
            let recorder = Recorder<MessageSnapshot>()
            let registration = try Query(node: node, spec: spec).addSnapshotListener(recorder.callback)
            #expect(await recorder.waitFor(1))
            watched.append(Watched(spec: spec, recorder: recorder, registration: registration))
        }
        return watched
    }

    /// One random action, applied to the node and to the model; its description.
    mutating func randomStep(using random: inout SplitMix64) async throws -> String {
        let messages = Array(model.messages.keys).sorted()
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 35 || messages.isEmpty {
            return try await post(using: &random)
        } else if roll < 65 {
            return try await reportOne(messages.randomElement(using: &random)!, using: &random)
        } else if roll < 78 {
            return try await retractOne(messages.randomElement(using: &random)!, using: &random)
        } else {
            return try await toggleBlock(others.randomElement(using: &random)!)
        }
    }

    private mutating func post(using random: inout SplitMix64) async throws -> String {
        let channel = Int.random(in: 0..<5, using: &random) == 0 ? busan : seoul
        let content: MessageContent =
            switch Int.random(in: 0..<3, using: &random) {
            case 0: .text("글 \(model.messages.count)")
            case 1: .location(latitude: 37.5, longitude: 127)
            default: .photo(BlobHash(BLAKE2b.hash256([UInt8(model.messages.count & 0xff)])))
            }
        if Int.random(in: 0..<4, using: &random) == 0 {
            let id = try await channel.send(content)
            let created = try #require(try node.store.document(id)).created
            model.post(id, channel: channel.id, author: node.publicKey, created: created, type: MessageType(content))
            return "I post"
        }
        let author = others.randomElement(using: &random)!
        let created = Model.time(Int.random(in: 0..<10, using: &random))  // repeats: ties break by id
        let document = try Document.sign(
            .message(Message(channel: channel.id, senderName: "x", content: content)), created: created, by: author)
        try await node.receive(document)
        model.post(
            document.id, channel: channel.id, author: author.publicKey, created: created, type: MessageType(content))
        return "\(author.publicKey) posts"
    }

    private mutating func reportOne(_ message: DocumentID, using random: inout SplitMix64) async throws -> String {
        let home = model.messages[message]!.channel
        if Int.random(in: 0..<6, using: &random) == 0, let channel = [seoul, busan].first(where: { $0.id == home }) {
            try await channel.report(message)
            model.report(message, by: node.publicKey, in: home)
            return "I report"
        }
        let reporter = others.randomElement(using: &random)!
        let channel = Int.random(in: 0..<6, using: &random) == 0 ? (home == seoul.id ? busan.id : seoul.id) : home
        let document = try Document.sign(.report(Report(channel: channel, message: message)), created: 5, by: reporter)
        try await node.receive(document)
        model.report(message, by: reporter.publicKey, in: channel)
        return "\(reporter.publicKey) reports"
    }

    private mutating func retractOne(_ message: DocumentID, using random: inout SplitMix64) async throws -> String {
        let target = model.messages[message]!
        if target.author == node.publicKey {
            let channel = target.channel == seoul.id ? seoul : busan
            try await channel.retract(message)
            model.retract(message, by: node.publicKey, in: target.channel)
            return "I retract"
        }
        let signer =
            Bool.random(using: &random)
            ? others.first { $0.publicKey == target.author }! : others.randomElement(using: &random)!
        let document = try Document.sign(
            .retract(Retract(channel: target.channel, message: message)), created: 6, by: signer)
        try await node.receive(document)
        model.retract(message, by: signer.publicKey, in: target.channel)
        return "\(signer.publicKey) retracts"
    }

    private mutating func toggleBlock(_ key: SigningKey) async throws -> String {
        if model.blocked.contains(key.publicKey) {
            try await node.unblock(key.publicKey)
            model.blocked.remove(key.publicKey)
            return "unblock \(key.publicKey)"
        }
        try await node.block(key.publicKey)
        model.blocked.insert(key.publicKey)
        return "block \(key.publicKey)"
    }
}

/// What PROTOCOL.md §1.11 and the query semantics say the node shows, computed the plain way.
struct Model {
    struct Posted {
        let channel: ChannelID
        let author: PublicKey
        let created: UInt64
        let type: MessageType
    }

    let viewer: PublicKey
    let threshold: Int
    var messages: [DocumentID: Posted] = [:]
    var reports: Set<[UInt8]> = []  // message ‖ reporter ‖ channel
    var retracts: Set<[UInt8]> = []  // message ‖ author ‖ channel
    var posters: Set<[UInt8]> = []  // channel ‖ author
    var blocked: Set<PublicKey> = []

    static func time(_ slot: Int) -> UInt64 { 1_764_400_000_000 + UInt64(slot) * 1_000 }

    mutating func post(_ id: DocumentID, channel: ChannelID, author: PublicKey, created: UInt64, type: MessageType) {
        messages[id] = Posted(channel: channel, author: author, created: created, type: type)
        posters.insert(channel.bytes + author.bytes)
    }

    mutating func report(_ id: DocumentID, by reporter: PublicKey, in channel: ChannelID) {
        reports.insert(id.bytes + reporter.bytes + channel.bytes)
    }

    mutating func retract(_ id: DocumentID, by author: PublicKey, in channel: ChannelID) {
        retracts.insert(id.bytes + author.bytes + channel.bytes)
    }

    func reportCount(_ id: DocumentID) -> Int {
        let message = messages[id]!
        let reporters = Set([viewer] + [Others.bob, Others.carol, Others.dave, Others.erin].map(\.publicKey))
        return reporters.filter { reporter in
            reporter != message.author && !blocked.contains(reporter)
                && posters.contains(message.channel.bytes + reporter.bytes)
                && reports.contains(id.bytes + reporter.bytes + message.channel.bytes)
        }.count
    }

    func isVisible(_ id: DocumentID) -> Bool {
        let message = messages[id]!
        let retracted = retracts.contains(id.bytes + message.author.bytes + message.channel.bytes)
        let reportedByViewer = reports.contains(id.bytes + viewer.bytes + message.channel.bytes)
        return !retracted && !blocked.contains(message.author) && !reportedByViewer
    }

    var seoulID: ChannelID { try! ChannelName(normalizing: "서울특별시").id }
    var busanID: ChannelID { try! ChannelName(normalizing: "부산광역시").id }

    /// The query order, written out here rather than borrowed from the code under test.
    func precedes(_ first: SortKey, _ second: SortKey, descending: Bool) -> Bool {
        if first.created == second.created && first.id == second.id { return false }
        let ascending =
            first.created != second.created
            ? first.created < second.created : first.id.bytes.lexicographicallyPrecedes(second.id.bytes)
        return descending ? !ascending : ascending
    }

    func isWithinCursors(_ position: SortKey, of query: MessageQuery) -> Bool {
        if let start = query.startAfter, !precedes(start, position, descending: query.descending) { return false }
        if let end = query.endBefore, !precedes(position, end, descending: query.descending) { return false }
        return true
    }

    func evaluate(_ query: MessageQuery) -> [ModelRow] {
        var rows = messages.filter { id, message in
            guard message.channel == query.channel, isVisible(id) else { return false }
            if let isActive = query.isActive, (reportCount(id) < threshold) != isActive { return false }
            if let author = query.author, message.author != author { return false }
            if let type = query.type, message.type != type { return false }
            return isWithinCursors(SortKey(created: message.created, id: id), of: query)
        }.map { SortKey(created: $0.value.created, id: $0.key) }
        rows.sort { precedes($0, $1, descending: query.descending) }
        switch query.limit {
        case .first(let count)?: rows = Array(rows.prefix(count))
        case .last(let count)?: rows = Array(rows.suffix(count))
        case nil: break
        }
        return rows.map {
            ModelRow(id: $0.id, reportCount: reportCount($0.id), isActive: reportCount($0.id) < threshold)
        }
    }
}
