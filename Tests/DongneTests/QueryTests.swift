import Foundation
import Testing

@testable import Dongne

@Suite struct QueryTests {
    @Test func limitsOrdersAndCursorsSelectTheRightPage() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        for index in 0..<10 { try await seoul.send(.text("\(index)")) }
        func texts(_ query: Query) async throws -> [String] {
            try await query.getDocuments().documents.map {
                guard case .text(let text) = $0.content else { return "?" }
                return text
            }
        }
        let ordered = seoul.messages.order(by: .created)
        #expect(try await texts(ordered.limit(3)) == ["0", "1", "2"])
        #expect(try await texts(ordered.limit(toLast: 3)) == ["7", "8", "9"])
        #expect(try await texts(seoul.messages.order(by: .created, descending: true).limit(3)) == ["9", "8", "7"])
        #expect(try await texts(seoul.messages.order(by: .created, descending: true).limit(toLast: 2)) == ["1", "0"])
        let page = try await ordered.limit(toLast: 3).getDocuments().documents
        #expect(try await texts(ordered.end(before: page[0]).limit(toLast: 3)) == ["4", "5", "6"])
        #expect(try await texts(ordered.start(after: page[0])) == ["8", "9"])
        #expect(try await texts(seoul.messages.whereField(.type, isEqualTo: .location)).isEmpty)
        let contradictory = seoul.messages.whereField(.isActive, isEqualTo: true).whereField(
            .isActive, isEqualTo: false)
        #expect(try await texts(contradictory).isEmpty)
        #expect(try await texts(seoul.messages.whereField(.author, isEqualTo: test.node.publicKey)).count == 10)
    }

    @Test func endingTheAsyncSequenceRemovesTheListener() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        try await seoul.send(.text("first"))
        var iterator = seoul.messages.snapshots().makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.documentChanges.map(\.type) == [.added])
        try await seoul.send(.text("second"))
        let second = try #require(try await iterator.next())
        #expect(second.documentChanges.map(\.type) == [.added])
        #expect(second.count == 2)

        let task = Task {
            var count = 0
            for try await _ in seoul.messages.whereField(.isActive, isEqualTo: true).snapshots() { count += 1 }
            return count
        }
        for _ in 0..<100_000 where await test.node.hub.observerCount < 2 { await Task.yield() }
        #expect(await test.node.hub.observerCount == 2, "both sequences are listening")
        task.cancel()
        _ = try await task.value
        for _ in 0..<100_000 where await test.node.hub.observerCount > 1 { await Task.yield() }
        #expect(await test.node.hub.observerCount == 1, "the cancelled sequence removed its listener")
    }

    /// A consumer that takes nothing while 300 messages arrive and one is retracted holds one waiting snapshot,
    /// not 300; what it takes then applies, change by change, to what it had, and gives the latest documents.
    @Test func aSlowConsumerGetsTheChangesMergedIntoOneSnapshotThatStillApplies() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let first = try await seoul.send(.text("처음"))
        let query = seoul.messages.whereField(.isActive, isEqualTo: true).order(by: .created).limit(toLast: 50)
        var iterator = query.snapshots().makeAsyncIterator()
        let had = try #require(try await iterator.next()).documents
        #expect(had.map(\.id) == [first])
        for index in 0..<300 { try await seoul.send(.text("\(index)")) }
        try await seoul.retract(first)
        let latest = try await query.getDocuments().documents
        let merged = try #require(try await iterator.next())
        #expect(merged.documents == latest)
        #expect(SnapshotDiff.apply(merged.documentChanges, to: had) == latest)
        #expect(merged.documentChanges.count == 51, "one removed, fifty added: \(merged.documentChanges.count)")
        try await seoul.send(.text("다음"))
        let next = try #require(try await iterator.next())
        #expect(next.documentChanges.map(\.type) == [.removed, .added] && next.documents.last?.content == .text("다음"))
    }

    @Test func theChannelListFollowsJoinsLeavesChannelDocumentsAndNewMessages() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let recorder = Recorder<ChannelSnapshot>()
        let registration = test.node.channels.addSnapshotListener(recorder.callback)
        #expect(await recorder.waitFor(1))
        #expect(recorder.last?.isEmpty == true)
        let seoul = try await test.node.join("서울특별시")
        #expect(recorder.last?.documentChanges.map(\.type) == [.added])
        #expect(recorder.last?.documents.first?.name == "서울특별시")
        try await seoul.send(.text("안녕"))
        #expect(recorder.last?.documentChanges.map(\.type) == [.modified])
        #expect(recorder.last?.documents.first?.lastMessageCreated != nil)
        let gyeonggi = try ChannelName(normalizing: "경기도")
        let named = try Document.sign(
            .channel(ChannelInfo(name: gyeonggi, description: "경기")), created: 1, by: Others.bob)
        try await test.node.receive(named)
        #expect(recorder.last?.documents.map(\.name) == ["경기도", "서울특별시"])
        #expect(recorder.last?.documents.first?.isJoined == false)
        try await test.node.leave(seoul)
        #expect(recorder.last?.documentChanges.map(\.type) == [.removed])
        #expect(try await test.node.channels.getDocuments().documents.map(\.name) == ["경기도"])
        registration.remove()
    }
}
