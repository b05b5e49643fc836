import Foundation
import Testing

@testable import Dongne

/// The seed app's moderation rules as listeners see them.
@Suite struct ModerationListenerTests {
    @Test func aBlockRemovesTheAuthorsMessagesFromEveryListenerAndAnUnblockBringsThemBack() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시"), busan = try test.node.channel(named: "부산광역시")
        try await test.node.receive(
            try Others.message("서울에서", by: Others.bob, in: seoul, at: 1),
            try Others.message("부산에서", by: Others.bob, in: busan, at: 2),
            try Others.message("캐럴", by: Others.carol, in: seoul, at: 3))
        let inSeoul = Recorder<MessageSnapshot>(), inBusan = Recorder<MessageSnapshot>()
        let registrations = [
            try seoul.messages.addSnapshotListener(inSeoul.callback),
            try busan.messages.addSnapshotListener(inBusan.callback),
        ]
        #expect(await inSeoul.waitFor(1))
        #expect(await inBusan.waitFor(1))
        try await test.node.block(Others.bob.publicKey)
        #expect(inSeoul.last?.documentChanges.map(\.type) == [.removed])
        #expect(inSeoul.last?.documents.map(\.author) == [Others.carol.publicKey])
        #expect(inBusan.last?.documents.isEmpty == true)
        #expect(try test.node.blockedAuthors() == [Others.bob.publicKey])
        try await test.node.unblock(Others.bob.publicKey)
        #expect(inSeoul.last?.documentChanges.map(\.type) == [.added])
        #expect(inSeoul.last?.documents.count == 2)
        #expect(inBusan.last?.documentChanges.map(\.type) == [.added])
        registrations.forEach { $0.remove() }
    }

    @Test func aRetractedMessageIsRemovedEverywhere() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let mine = try await seoul.send(.text("실수"))
        let all = Recorder<MessageSnapshot>(), active = Recorder<MessageSnapshot>()
        let registrations = [
            try seoul.messages.addSnapshotListener(all.callback),
            try seoul.messages.whereField(.isActive, isEqualTo: true).addSnapshotListener(active.callback),
        ]
        #expect(await all.waitFor(1))
        #expect(await active.waitFor(1))
        try await seoul.retract(mine)
        for recorder in [all, active] {
            #expect(recorder.last?.documentChanges.map(\.type) == [.removed])
            #expect(recorder.last?.documents.isEmpty == true)
        }
        registrations.forEach { $0.remove() }
    }

    @Test func onlyTheAuthorMayRetract() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let theirs = try Others.message("bob's", by: Others.bob, in: seoul, at: 1)
        try await test.node.receive(theirs)
        await #expect(throws: DongneError.notTheAuthor(theirs.id)) { try await seoul.retract(theirs.id) }
        let busan = try test.node.channel(named: "부산광역시")
        await #expect(throws: DongneError.unknownMessage(theirs.id)) { try await busan.report(theirs.id) }
    }

    @Test func aReportHidesTheMessageForTheReporterAtOnce() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let theirs = try Others.message("광고", by: Others.bob, in: seoul, at: 1)
        try await test.node.receive(theirs)
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(recorder.callback)
        #expect(await recorder.waitFor(1))
        try await seoul.report(theirs.id, reason: "광고")
        #expect(recorder.last?.documentChanges.map(\.type) == [.removed])
        registration.remove()
    }

    @Test func reportsByPeopleWhoNeverPostedHereDoNotCount() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let target = try await seoul.send(.text("평범한 글"))
        for (offset, key) in [Others.bob, Others.carol, Others.dave].enumerated() {
            try await test.node.receive(try Others.report(target, by: key, in: seoul, at: UInt64(offset)))
        }
        let snapshot = try await seoul.messages.getDocuments()
        #expect(snapshot.documents.first?.reportCount == 0)
        #expect(snapshot.documents.first?.isActive == true)
    }

    @Test func aViewerSeesWhyAMessageIsHiddenWithTheReportersReasonsAndCanReadItAnyway() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let target = try Others.message("사세요 사세요", by: Others.erin, in: seoul, at: 1)
        try await test.node.receive(target)
        for (offset, (key, reason)) in [(Others.bob, "광고"), (Others.carol, "광고"), (Others.dave, nil)].enumerated() {
            let at = UInt64(10 + offset * 2)
            try await test.node.receive(
                try Others.message("안녕", by: key, in: seoul, at: at),
                try Document.sign(.report(Report(channel: seoul.id, message: target.id, reason: reason)), created: at + 1, by: key))
        }
        let moderation = try seoul.moderation(of: target.id)
        #expect(moderation.isHidden && moderation.reportCount == 3 && moderation.reportThreshold == 3)
        #expect(!moderation.retracted && !moderation.authorBlocked && !moderation.reportedByYou)
        #expect(moderation.reports.map(\.reason) == ["광고", "광고", nil])
        #expect(moderation.message.content == .text("사세요 사세요"), "the content, to show anyway")
        #expect(try seoul.hiddenMessages().map(\.message.id) == [target.id])
        let shown = try await seoul.messages.whereField(.isActive, isEqualTo: true).getDocuments().documents.map(\.id)
        #expect(!shown.contains(target.id), "queries of active messages still leave it out")
        // Blocking and one's own report are reasons too; a message no one hides says so.
        let mine = try await seoul.send(.text("내 글"))
        #expect(try !seoul.moderation(of: mine).isHidden)
        try await test.node.block(Others.erin.publicKey)
        #expect(try seoul.moderation(of: target.id).authorBlocked)
        try await seoul.report(try Others.message("안녕", by: Others.bob, in: seoul, at: 10).id, reason: "스팸")
        let reported = try seoul.hiddenMessages().map { ($0.message.senderName, $0.reportedByYou) }
        #expect(reported.count == 2 && reported.contains { $0.1 })
    }

    @Test func theThresholdIsConfigurable() async throws {
        let test = try await TestNode.start(threshold: 1)
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let target = try await seoul.send(.text("하나면 끝"))
        try await test.node.receive(
            try Others.message("hi", by: Others.bob, in: seoul, at: 1),
            try Others.report(target, by: Others.bob, in: seoul, at: 2))
        let active = try await seoul.messages.whereField(.isActive, isEqualTo: true).getDocuments()
        let inactive = try await seoul.messages.whereField(.isActive, isEqualTo: false).getDocuments()
        #expect(active.documents.map(\.id) == [try Others.message("hi", by: Others.bob, in: seoul, at: 1).id])
        #expect(inactive.documents.map(\.id) == [target])
    }

    @Test func invalidWritesThrowTheDocumentRule() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        await #expect(throws: DongneError.invalidDocument(.emptyText(field: "text"))) {
            try await seoul.send(.text("  "))
        }
        await #expect(throws: DongneError.invalidDocument(.latitudeOutOfRange(91))) {
            try await seoul.send(.location(latitude: 91, longitude: 0))
        }
        #expect(try await seoul.messages.getDocuments().isEmpty)
    }
}
