import DongneNet
import Foundation
import Synchronization
import Testing
import DongneSystem

/// Connections on an event loop: bytes arrive in order, and a peer that stops reading is cut off once the
/// bytes waiting for it pass the limit, so a node's memory stays bounded.
@Suite struct TCPBackPressureTests {
    final class Inbox: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let ended = Mutex<SystemError??>(nil)
        let accepted = Mutex<TCPConnection?>(nil)

        /// Reads `connection` into this inbox.
        func read(_ connection: TCPConnection?) {
            connection?.start(
                onReceive: { chunk in self.bytes.withLock { $0 += chunk } },
                onClose: { error in self.ended.withLock { $0 = .some(error) } })
        }
    }

    /// A listener on `loop` whose accepted connection goes to `inbox`, and is read at once if `reading`.
    static func listen(on loop: EventLoop, into inbox: Inbox, reading: Bool) throws -> TCPListener {
        try TCPListener(host: "127.0.0.1", port: 0, loop: loop) { connection in
            inbox.accepted.withLock { $0 = connection }
            if reading { inbox.read(connection) }
        }
    }

    /// A listener that reads what it accepts into an inbox, and a started client connected to it.
    static func readingPair(on loop: EventLoop) async throws -> (TCPListener, TCPConnection, Inbox) {
        let inbox = Inbox()
        let listener = try listen(on: loop, into: inbox, reading: true)
        do {
            let client = try await TCPConnection.connect(to: listener.address, on: loop)
            client.start(onReceive: { _ in }, onClose: { _ in })
            return (listener, client, inbox)
        } catch {
            listener.close()
            throw error
        }
    }

    @Test func bytesArriveInOrderAndBothEndsCountThem() async throws {
        let loop = try EventLoop(name: "test-tcp")
        let (listener, client, inbox) = try await Self.readingPair(on: loop)
        defer { listener.close() }
        let message = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        for offset in stride(from: 0, to: message.count, by: 100_000) {
            client.send(Array(message[offset..<min(message.count, offset + 100_000)]))
        }
        #expect(await ReconnectionTests.eventually { inbox.bytes.withLock { $0.count } == message.count })
        #expect(inbox.bytes.withLock { $0 } == message)
        #expect(client.traffic.sent == message.count)
        #expect(inbox.accepted.withLock { $0?.traffic.received } == message.count)
        client.closeAfterWrites()
        #expect(await ReconnectionTests.eventually { inbox.ended.withLock { $0 } != nil })
        #expect(inbox.ended.withLock { $0 } == .some(nil), "a clean end of stream")
    }

    /// Threads that send at once (a listener's callback and a request's answer, say) each write straight to the
    /// socket when nothing waits and queue behind what does: every record arrives whole, each thread's in the
    /// order it sent them, none lost, also when the socket fills and the loop takes over.
    ///
    /// The reader starts only once a sender sees bytes waiting in the queue, so the socket surely fills; and all
    /// records together stay under ``TCPConnection/maximumQueuedBytes``, so however slowly the reader catches up
    /// the connection is never taken for stuck (with more, a busy machine cut it off and the test failed).
    @Test func sendsFromSeveralThreadsArriveWholeAndInEachThreadsOrder() async throws {
        let loop = try EventLoop(name: "test-tcp")
        let inbox = Inbox()
        let listener = try Self.listen(on: loop, into: inbox, reading: false)
        defer { listener.close() }
        let client = try await TCPConnection.connect(to: listener.address, on: loop)
        client.start(onReceive: { _ in }, onClose: { _ in })
        #expect(await ReconnectionTests.eventually { inbox.accepted.withLock { $0 } != nil })
        let (threads, records, longestBody) = (4, 500, 6_000)
        let bodyLength: @Sendable (Int, Int) -> Int = { thread, number in 1 + (number * 7_919 + thread * 131) % longestBody }
        let expected = (0..<threads).reduce(0) { total, thread in
            total + (0..<records).reduce(0) { $0 + 5 + bodyLength(thread, $1) }
        }
        #expect(expected < TCPConnection.maximumQueuedBytes)
        let reading = Atomic<Bool>(false)
        let startReading: @Sendable () -> Void = {
            if !reading.exchange(true, ordering: .relaxed) { inbox.read(inbox.accepted.withLock { $0 }) }
        }
        // A record: its thread (a byte), its number and its body's length (two bytes each), then the body: its
        // thread's value, repeated.
        let done = Mutex(0)
        for thread in 0..<threads {
            Thread.detachNewThread {
                for number in 0..<records {
                    let length = bodyLength(thread, number)
                    let header = [UInt8(thread), UInt8(number >> 8), UInt8(number & 0xFF), UInt8(length >> 8), UInt8(length & 0xFF)]
                    client.send(header + [UInt8](repeating: UInt8(thread), count: length))
                    if client.unsentBytes > 0 { startReading() }
                }
                done.withLock { $0 += 1 }
            }
        }
        #expect(await ReconnectionTests.eventually { done.withLock { $0 } == threads })
        let queued = reading.load(ordering: .relaxed)
        #expect(queued, "the socket filled and bytes waited in the queue")
        startReading()
        #expect(await ReconnectionTests.eventually(seconds: 30) { inbox.bytes.withLock { $0.count } == expected })
        #expect(inbox.ended.withLock { $0 } == nil, "the connection is still open")
        let bytes = inbox.bytes.withLock { $0 }
        var next = [Int](repeating: 0, count: threads)
        var offset = 0
        while offset + 5 <= bytes.count {
            let thread = Int(bytes[offset]), number = Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            let length = Int(bytes[offset + 3]) << 8 | Int(bytes[offset + 4])
            guard thread < threads, number == next[thread], offset + 5 + length <= bytes.count,
                bytes[(offset + 5)..<(offset + 5 + length)].allSatisfy({ $0 == UInt8(thread) })
            else {
                Issue.record("record at \(offset) is not whole or not in its thread's order")
                return
            }
            next[thread] += 1
            offset += 5 + length
        }
        #expect(offset == bytes.count && next == [Int](repeating: records, count: threads))
        client.close()
    }

    @Test func aConnectionClosedAfterItsWritesDeliversThemAllEvenWhenItsOwnerLetsGo() async throws {
        let loop = try EventLoop(name: "test-tcp")
        let inbox = Inbox()
        // Accepted, and read only later: the bytes wait in the kernel's buffers and the sender's queue.
        let listener = try Self.listen(on: loop, into: inbox, reading: false)
        defer { listener.close() }
        let total = 6 << 20
        do {
            let client = try await TCPConnection.connect(to: listener.address, on: loop)
            client.start(onReceive: { _ in }, onClose: { _ in })
            for _ in 0..<(total >> 16) { client.send([UInt8](repeating: 5, count: 1 << 16)) }
            client.closeAfterWrites()
        }  // the only reference is gone; the loop keeps the connection until its bytes are written
        #expect(await ReconnectionTests.eventually { inbox.accepted.withLock { $0 } != nil })
        inbox.read(inbox.accepted.withLock { $0 })
        #expect(await ReconnectionTests.eventually { inbox.ended.withLock { $0 } != nil })
        #expect(inbox.bytes.withLock { $0.count } == total)
        #expect(inbox.ended.withLock { $0 } == .some(nil), "a clean end of stream after the last byte")
    }

    @Test func aPeerThatStopsReadingIsCutOffOnceTheLimitWaitsForIt() async throws {
        let loop = try EventLoop(name: "test-tcp")
        let inbox = Inbox()
        // Accepted and never read: the kernel's buffers fill, then the sender's queue.
        let listener = try Self.listen(on: loop, into: inbox, reading: false)
        defer { listener.close() }
        let client = try await TCPConnection.connect(to: listener.address, on: loop)
        client.start(onReceive: { _ in }, onClose: { error in inbox.ended.withLock { $0 = .some(error) } })
        let chunk = [UInt8](repeating: 1, count: 1 << 20)
        for _ in 0..<64 { client.send(chunk) }
        #expect(await ReconnectionTests.eventually { inbox.ended.withLock { $0 } != nil })
        #expect(inbox.ended.withLock { $0 }??.code == ENOBUFS)
        #expect(client.traffic.sent < 64 << 20, "what the kernel took, not all of it")
        inbox.accepted.withLock { $0?.close() }
    }
}
