import DongneCore
import DongneStore
import Foundation
import Testing

@testable import Dongne

/// A local message shows at once and its commit may be held a moment (PROTOCOL.md §2.4); a peer whose session
/// comes up in that moment learns of it by reconciliation all the same, although the store does not have it yet.
@Suite struct HeldCommitReconciliationTests {
    @Test func aMessageWhoseCommitIsHeldReachesAPeerThatConnectsMeanwhile() async throws {
        let directories = (0..<2).map { _ in NSTemporaryDirectory() + "dongne-held-" + UUID().uuidString }
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        // The sender listens (an inbound session writes nothing to its store, which would commit the held
        // message with it) and holds its message's commit for longer than the test: throughout.
        var configuration = Configuration.testing(dataDirectory: directories[0], displayName: "민지", listenPort: 0)
        configuration.deferredCommitDelay = .seconds(600)
        let a = try await Node.start(configuration)
        let seoulA = try await a.join("서울특별시")
        let shownOnA = Recorder<MessageSnapshot>()
        let registrationA = try seoulA.messages.addSnapshotListener(includeMetadataChanges: true, shownOnA.callback)
        let documentsBefore = try a.store.documentCount()
        let sending = Task { try await seoulA.send(.text("연결되는 동안에")) }  // returns once on disk: at stop
        #expect(await ReconnectionTests.eventually { shownOnA.last?.documents.count == 1 }, "shown at once")
        #expect(try a.store.documentCount() == documentsBefore, "and not committed")

        let port = try #require(a.listeningAddress?.split(separator: ":").last)
        let b = try await Node.start(
            Configuration.testing(dataDirectory: directories[1], displayName: "준호", peers: ["127.0.0.1:\(port)"]))
        let seoulB = try await b.join("서울특별시")
        let shownOnB = Recorder<MessageSnapshot>()
        let registrationB = try seoulB.messages.addSnapshotListener(shownOnB.callback)
        // Well within the anti-entropy round (30 s), which would not find it in the store either.
        #expect(
            await ReconnectionTests.eventually(seconds: 20) {
                shownOnB.last?.documents.first?.content == .text("연결되는 동안에")
            }, "the peer reconciled it from memory")
        // Its pending flag turns false with the clearing's commit, which is held like the message's once that
        // committed (as B's profile, stored meanwhile, made it): the acknowledgement shows in memory at once.
        let id = try #require(shownOnA.last?.documents.first?.id)
        #expect(
            await ReconnectionTests.eventually(seconds: 20) { !a.store.isPendingWrite(id) }, "and acknowledged it")
        registrationA.remove()
        registrationB.remove()
        await b.stop()
        await a.stop()
        _ = try? await sending.value
    }
}
