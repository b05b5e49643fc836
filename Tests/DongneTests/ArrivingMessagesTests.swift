import DongneStore
import Foundation
import Testing

@testable import Dongne

/// Received messages are shown once their signatures hold, and local ones at once, before their commit: reads
/// merge them with the store exactly as they will show once stored, and withdraw them if the store fails.
@Suite struct ArrivingMessagesTests {
    @Test func anArrivingMessageTakesItsPlaceInTheWindowBeforeItIsStored() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        try await test.node.receive(
            try Others.message("1", by: Others.bob, in: seoul, at: 10), try Others.message("2", by: Others.bob, in: seoul, at: 20),
            try Others.message("3", by: Others.bob, in: seoul, at: 30))
        let newest = try Others.message("4", by: Others.carol, in: seoul, at: 40)
        let oldest = try Others.message("0", by: Others.carol, in: seoul, at: 5)
        _ = test.node.source.arriving.add([newest, oldest], except: test.node.publicKey)

        let last = try await seoul.messages.order(by: .created).limit(toLast: 3).getDocuments()
        #expect(last.documents.map(\.created) == [20, 30, 40])
        let first = try await seoul.messages.order(by: .created).limit(2).getDocuments()
        #expect(first.documents.map(\.created) == [5, 10])
        let newestFirst = try await seoul.messages.order(by: .created, descending: true).limit(2).getDocuments()
        #expect(newestFirst.documents.map(\.created) == [40, 30])
        let carols = try await seoul.messages.whereField(.author, isEqualTo: Others.carol.publicKey).getDocuments()
        #expect(carols.documents.map(\.created) == [5, 40], "filters apply to arriving messages too")
        let photos = try await seoul.messages.whereField(.type, isEqualTo: .photo).getDocuments()
        #expect(photos.documents.isEmpty)
        let reported = try await seoul.messages.whereField(.isActive, isEqualTo: false).getDocuments()
        #expect(reported.documents.isEmpty, "an arriving message has no reports: it is active")
        #expect(try test.node.store.document(newest.id) == nil, "none of this is stored")
        #expect(last.documents.last?.metadata.hasPendingWrites == false)
    }

    @Test func aMessageThatStoredDocumentsAffectWaitsForItsCommit() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let retracted = try Others.message("지울게요", by: Others.bob, in: seoul, at: 10)
        let byBlocked = try Others.message("차단됨", by: Others.dave, in: seoul, at: 20)
        let plain = try Others.message("평범", by: Others.carol, in: seoul, at: 30)
        try await test.node.receive(try Others.retract(retracted.id, by: Others.bob, in: seoul, at: 11))
        try await test.node.block(Others.dave.publicKey)
        _ = test.node.source.arriving.add([retracted, byBlocked, plain], except: test.node.publicKey)
        let shown = try await seoul.messages.getDocuments()
        #expect(shown.documents.map(\.id) == [plain.id], "a retraction stored first, or a block, keeps them out")
    }

    @Test func aReceivedMessageTheStoreCannotKeepIsShownThenWithdrawn() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        #expect(await recorder.waitFor(1))
        test.node.store.close()  // writes fail from now on; reads still work

        let message = try Others.message("저장 못 해요", by: Others.bob, in: seoul, at: 10)
        let results = await test.node.receive([message.bytes])
        #expect(results.count == 1 && (try? results[0].get()) == nil, "the store refused it")
        #expect(await recorder.waitFor(3))
        let changes = recorder.all.dropFirst().map { $0.documentChanges.map { ($0.type, $0.document.id) } }
        #expect(changes.count == 2)
        #expect(changes.first?.first?.0 == .added && changes.first?.first?.1 == message.id, "shown once verified")
        #expect(changes.last?.first?.0 == .removed && changes.last?.first?.1 == message.id, "withdrawn")
        #expect(try await seoul.messages.getDocuments().documents.isEmpty)
    }

    @Test func theSnapshotShownOnArrivalIsTheOneTheStoreGivesOnceCommitted() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let older = try (1...3).map { try Others.message("\($0)", by: Others.bob, in: seoul, at: UInt64($0) * 10) }
        for message in older { try await test.node.receive(message) }
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.order(by: .created).limit(toLast: 2).addSnapshotListener(
            recorder.callback)
        defer { registration.remove() }
        #expect(await recorder.waitFor(1))

        let newest = try Others.message("4", by: Others.carol, in: seoul, at: 40)
        try await test.node.receive(newest)  // returns once stored, so its commit's refresh has run too
        let arrival = try #require(recorder.all.dropFirst().first)
        #expect(arrival.documentChanges.map(\.type) == [.removed, .added])
        #expect(arrival.documentChanges.map(\.document.created) == [20, 40])
        #expect(recorder.last?.documents.map(\.id) == [older[2].id, newest.id])
        #expect(recorder.count == 2, "the commit changed nothing a listener sees: no further snapshot")
        let stored = try await seoul.messages.order(by: .created).limit(toLast: 2).getDocuments()
        #expect(stored.documents.map(\.id) == [older[2].id, newest.id])
        #expect(try test.node.store.document(newest.id) != nil)
    }

    @Test func anAuthorsFirstMessageInAChannelMakesTheirEarlierReportsCountOnceCommitted() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let carols = try Others.message("안녕", by: Others.carol, in: seoul, at: 10)
        try await test.node.receive(carols, try Others.report(carols.id, by: Others.bob, in: seoul, at: 11))
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.order(by: .created).addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        #expect(await recorder.waitFor(1))
        #expect(recorder.last?.documents.map(\.reportCount) == [0], "bob has not posted here: his report waits")

        let bobs = try Others.message("첫 글", by: Others.bob, in: seoul, at: 20)
        try await test.node.receive(bobs)  // shown on arrival, then committed
        #expect(recorder.last?.documents.map(\.id) == [carols.id, bobs.id])
        #expect(recorder.last?.documents.map(\.reportCount) == [1, 0], "the commit counted bob's report")
        let stored = try await seoul.messages.order(by: .created).getDocuments()
        #expect(stored.documents.map(\.reportCount) == [1, 0])
    }

    @Test func aCommitToldAfterALaterArrivalShowedStillAsksTheStoreNothing() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.order(by: .created).addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        #expect(await recorder.waitFor(1))
        try await test.node.receive(try Others.message("하나", by: Others.bob, in: seoul, at: 10))  // recomputes once
        let before = await test.node.hub.storeRecomputations
        let (first, second) = (
            try Others.message("둘", by: Others.bob, in: seoul, at: 20), try Others.message("셋", by: Others.carol, in: seoul, at: 30)
        )
        // The first is shown and committed (and leaves the arrivals), then the second is shown, and only then is
        // the hub told of the first's commit: as when messages come faster than commits are told.
        let arriving = test.node.source.arriving
        await test.node.show(arriving.add([first], except: test.node.publicKey))
        _ = try await test.node.store.insert([first])
        arriving.remove([first])
        await test.node.show(arriving.add([second], except: test.node.publicKey))
        await test.node.hub.committed([first])
        _ = try await test.node.store.insert([second])
        arriving.remove([second])
        await test.node.hub.committed([second])
        #expect(await test.node.hub.storeRecomputations == before, "both were shown on arrival; no commit changed anything")
        #expect(recorder.last?.documents.map(\.created) == [10, 20, 30])
        #expect(try await seoul.messages.order(by: .created).getDocuments().documents.map(\.created) == [10, 20, 30])
    }

    @Test func committingWhatArrivalAlreadyShowedAsksTheStoreNothing() async throws {
        // A message is shown on arrival only if the loop shows it before its deferred commit lands (else its
        // commit recounts, rightly). The default 4 ms is a race on a busy machine; half a second is not.
        let test = try await TestNode.start(deferredCommitDelay: .milliseconds(500))
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.order(by: .created).addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        #expect(await recorder.waitFor(1))
        try await test.node.receive(try Others.message("하나", by: Others.bob, in: seoul, at: 10))  // recomputes once
        let before = await test.node.hub.storeRecomputations

        try await test.node.receive(try Others.message("둘", by: Others.bob, in: seoul, at: 20))
        #expect(await test.node.hub.storeRecomputations == before, "shown on arrival; its commit changed nothing")
        #expect(recorder.last?.documents.map(\.created) == [10, 20])

        let carols = try Others.message("셋", by: Others.carol, in: seoul, at: 30)
        try await test.node.receive(try Others.report(carols.id, by: Others.dave, in: seoul, at: 29))
        let afterReport = await test.node.hub.storeRecomputations
        try await test.node.receive(try Others.message("넷", by: Others.dave, in: seoul, at: 40))
        #expect(await test.node.hub.storeRecomputations == afterReport + 1, "dave reported: his post recounts")
        #expect(recorder.last?.documents.map(\.created) == [10, 20, 40])

        let mine = try await seoul.send(.text("다섯"))  // shown at once as a pending write, then committed
        #expect(await test.node.hub.storeRecomputations == afterReport + 1, "a local message's commit neither")
        #expect(recorder.last?.documents.last?.id == mine)
        #expect(recorder.last?.documents.last?.metadata.hasPendingWrites == true)
    }

    @Test func aLocalMessageShowsAtOnceAsAPendingWriteWhileItsCommitWaits() async throws {
        let hold = Duration.seconds(120)  // far longer than the test: waiting it out fails the test
        let test = try await TestNode.start(deferredCommitDelay: hold)
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        #expect(await recorder.waitFor(1))
        let writes = test.node.store.statistics.writes

        let sending = Task { try await seoul.send(.text("먼저 보여요")) }
        #expect(await recorder.waitFor(2))
        let shown = try #require(recorder.last?.documents.first)
        #expect(recorder.last?.documentChanges.map(\.type) == [.added])
        #expect(shown.metadata.hasPendingWrites, "a local write is pending until a peer has it")
        #expect(try test.node.store.document(shown.id) == nil, "shown before it is stored")
        #expect(test.node.store.statistics.writes == writes)
        let read = try await seoul.messages.getDocuments()
        #expect(read.documents.map(\.id) == [shown.id], "reads merge it in too")

        let start = ContinuousClock.now
        test.node.store.close()  // commits the held write at once
        #expect(try await sending.value == shown.id)
        #expect(ContinuousClock.now - start < hold / 2)
        let reopened = try Store(path: test.directory + "/dongne.sqlite")
        defer { reopened.close() }
        #expect(try reopened.document(shown.id) != nil, "on disk once send returned")
    }

    @Test func aLocalMessageTheStoreCannotKeepIsWithdrawnAndItsSendThrows() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        #expect(await recorder.waitFor(1))
        test.node.store.close()  // writes fail from now on; reads still work

        await #expect(throws: StoreError.self) { try await seoul.send(.text("저장 못 해요")) }
        let changes = recorder.all.dropFirst().map { $0.documentChanges.map(\.type) }
        #expect(changes == [[.added], [.removed]], "shown at once, withdrawn when its commit failed")
        #expect(recorder.last?.documents.isEmpty == true)
        #expect(try await seoul.messages.getDocuments().documents.isEmpty)
    }

    @Test func aForgedMessageIsNeverShown() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        var bytes = try Others.message("위조", by: Others.bob, in: seoul, at: 10).bytes
        bytes[bytes.count - 1] ^= 1  // the signature's last byte
        let results = await test.node.receive([bytes])
        #expect((try? results[0].get()) == nil)
        #expect(try await seoul.messages.getDocuments().documents.isEmpty)
    }
}
