import Dongne
import DongneNet
import DongneStore
import Foundation
import Testing

/// A document dated more than ``DocumentLimits/maximumClockSkew`` ahead of the node's clock is not accepted yet
/// (PROTOCOL.md §2.6): neither stored, shown nor forwarded, acknowledged so that its sender stops sending it, and
/// not held against the sender, whose clock may simply be wrong. Found by an attack that dated 20 messages
/// 2^53 − 1 ms: they filled every history's last page for good.
@Suite struct FutureDatedTests {
    @Test func aMessageDatedPastTheSkewIsNeitherShownStoredNorForwardedNorHeldAgainstItsSender() async throws {
        let setup = try await AuthenticatedArrivalTests.Setup()
        let now = UInt64(Date().timeIntervalSince1970 * 1_000)
        let farAhead = try setup.message("영원히 맨 아래", by: setup.authorKey, created: DocumentLimits.maximumCreated)
        let anHourAhead = try setup.message("한 시간 뒤", by: setup.authorKey, created: now + 3_600_000)
        let soon = try setup.message("곧", by: setup.authorKey, created: now + DocumentLimits.maximumClockSkew / 2)
        setup.author.send(.batch(sequence: 1, documents: [farAhead, anHourAhead], acknowledges: []))
        setup.author.send(.batch(sequence: 2, documents: [soon], acknowledges: []))

        let acknowledged = {
            setup.author.messages.flatMap { message -> [UInt64] in
                switch message {
                case .acknowledge(let sequences): sequences
                case .batch(_, _, let acknowledges, _): acknowledges
                default: []
                }
            }
        }
        #expect(await ReconnectionTests.eventually { Set(acknowledged()).isSuperset(of: [1, 2]) })
        #expect(await setup.forwarded(soon, before: [farAhead, anHourAhead]) == (true, false))
        #expect(await ReconnectionTests.eventually { setup.changes(of: "곧") == [.added] })
        #expect(setup.changes(of: "영원히 맨 아래").isEmpty && setup.changes(of: "한 시간 뒤").isEmpty)
        #expect(try setup.a.store.documentCount(in: setup.seoul) == 1)
        let author = setup.authorKey.publicKey
        #expect(await setup.a.peers().first { $0.identity == author }?.refused == 0)
        await setup.stop()
    }

    @Test func theStoreRefusesADocumentDatedPastTheLatestTimeBeforeCheckingItsSignature() throws {
        let directory = NSTemporaryDirectory() + "dongne-future-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try Store(path: directory + "/dongne.sqlite")
        let key = SigningKey.generate()
        let channel = try ChannelName(normalizing: "서울특별시").id
        var bytes = try Document.sign(
            .message(Message(channel: channel, senderName: "p", content: .text("미래"))), created: 5_000, by: key
        ).bytes
        bytes[bytes.count - 1] ^= 1  // forged: an early refusal must come before the signature check
        let admitted = store.admit(parsed: [try UnverifiedDocument(parsing: bytes)], latestCreated: 4_999)
        #expect(admitted.newDocumentCount == 0 && admitted.invalidDocumentCount == 0)
    }
}
