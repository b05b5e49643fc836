@testable import Dongne
import DongneCore
import Foundation
import Testing

/// `DeliveryTrace`, what `scripts/bench-lan` reads to say where a message's time goes: the writer records when a
/// message was published and handed to the kernel, each receiver when it was read, routed, checked and stored,
/// in that order.
@Suite struct DeliveryTraceTests {
    @Test func aMessagePassesEveryStageInOrderOnItsWriterAndItsReceiver() async throws {
        let (writerTrace, readerTrace) = (DeliveryTrace(), DeliveryTrace())
        let writer = try await TestNode.start(name: "민지", listen: true, trace: writerTrace)
        defer { writer.stop() }
        let reader = try await TestNode.start(name: "준호", listen: true, trace: readerTrace)
        defer { reader.stop() }
        _ = try await reader.node.join("서울특별시")
        try await reader.node.connect(to: try #require(writer.node.listeningAddress))
        #expect(await ReconnectionTests.eventually(seconds: 30) { await writer.node.peers().count == 1 })
        let before = DeliveryTrace.now()
        let id = try await writer.node.channel(named: "서울특별시").send(.text("안녕"))
        let stored: Set<DeliveryTrace.Stage> = [.read, .routed, .checked, .stored]
        #expect(await ReconnectionTests.eventually(seconds: 30) { Set(readerTrace.times(of: id).keys) == stored })

        let written = writerTrace.times(of: id)
        let read = readerTrace.times(of: id)
        #expect(Set(written.keys) == [.published, .sent], "the writer neither reads nor checks its own message")
        // `sent` is when the writer's network finished with the message, by which time a receiver may have read it.
        let way = [before, written[.published], read[.read], read[.routed], read[.checked], read[.stored]]
            .compactMap { $0 }
        #expect(way.count == 6 && way == way.sorted(), "\(way)")
        #expect(try #require(written[.published]) <= #require(written[.sent]))
        // The reader's only peer wrote it, so no peer waits for its checks: they wait out the delivery first.
        let waited = try #require(read[.checked]) - #require(read[.routed])
        #expect(.nanoseconds(waited) >= PeerNetwork.shownFirstCheckDelay, "checked \(waited) ns after it was routed")
    }

    @Test func aTraceKeepsAtMostItsCapacity() {
        let trace = DeliveryTrace()
        let ids = (0..<(DeliveryTrace.capacity + 10)).map { n in
            DocumentID(withUnsafeBytes(of: UInt64(n).littleEndian, Array.init) + [UInt8](repeating: 0, count: 24))!
        }
        trace.read()
        trace.routed(ids)
        #expect(trace.times(of: ids[0]).keys.sorted { $0.rawValue < $1.rawValue } == [.read, .routed])
        #expect(trace.times(of: ids.last!).isEmpty, "past its capacity")
        #expect(trace.times(of: ids[DeliveryTrace.capacity - 1]).count == 2)
    }
}
