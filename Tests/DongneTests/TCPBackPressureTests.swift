import DongneNet
import Foundation
import Testing

/// A connection whose consumer falls behind stops reading, so TCP's flow control slows the sender and memory
/// stays bounded; it reads on once the consumer catches up.
@Suite struct TCPBackPressureTests {
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes = 0
        private var connection: TCPConnection?
        func add(_ count: Int) { lock.withLock { bytes += count } }
        var total: Int { lock.withLock { bytes } }
        func adopt(_ accepted: TCPConnection) { lock.withLock { connection = accepted } }
        var accepted: TCPConnection? { lock.withLock { connection } }
    }

    @Test func aReaderPausesWhileItsConsumerIsBehindAndResumesWhenItCatchesUp() async throws {
        let tally = Tally()
        let listener = try TCPListener(host: "127.0.0.1", port: 0) { tally.adopt($0) }
        defer { listener.close() }
        let client = try TCPConnection.connect(to: listener.address)
        defer { client.close() }
        client.start(onReceive: { _ in }, onClose: { _ in })
        #expect(await ReconnectionTests.eventually { tally.accepted != nil })
        let server = try #require(tally.accepted)
        defer { server.close() }
        server.start(consumedOnReturn: false, onReceive: { tally.add($0.count) }, onClose: { _ in })

        let chunk = [UInt8](repeating: 7, count: 65_536)
        let total = 6 << 20  // below the sender's own 8 MiB queue limit
        for _ in 0..<(total / chunk.count) { client.send(chunk) }
        let limit = TCPConnection.maximumUnconsumedBytes
        #expect(await ReconnectionTests.eventually { tally.total >= limit })
        // The sender writes what the kernel's buffers take; whatever it managed, the reader read no further.
        _ = await ReconnectionTests.eventually(seconds: 2) { client.traffic.sent == total }
        #expect(tally.total <= limit + 65_536, "read \(tally.total) bytes with none consumed")

        server.consumed(tally.total)
        #expect(await ReconnectionTests.eventually { tally.total >= limit + 65_536 + 1 })
        var consumed = tally.total
        while tally.total < total {
            server.consumed(tally.total - consumed)
            consumed = tally.total
            guard await ReconnectionTests.eventually(seconds: 5, { tally.total > consumed || tally.total == total })
            else { break }
        }
        #expect(tally.total == total, "everything arrives once the consumer keeps up")
    }
}
