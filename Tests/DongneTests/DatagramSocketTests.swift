import Dongne
import DongneNet
import DongneStore
import Foundation
import Testing

/// Datagrams on real UDP sockets: a node sends small documents as datagrams and takes them, once each.
@Suite struct DatagramSocketTests {
    /// What a UDP socket of the test received.
    final class Inbox: @unchecked Sendable {
        private let lock = NSLock()
        private var datagrams: [[UInt8]] = []
        func add(_ datagram: [UInt8]) { lock.withLock { datagrams.append(datagram) } }
        var all: [[UInt8]] { lock.withLock { datagrams } }
    }

    @Test func smallDocumentsGoAsDatagramsAndReplayedOrForgedDatagramsAreDropped() async throws {
        let directory = NSTemporaryDirectory() + "dongne-datagram-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let node = try await Node.start(Configuration.testing(dataDirectory: directory, displayName: "a", listenPort: 0))
        let seoul = try await node.join("서울특별시")
        let port = try #require(node.listeningAddress?.split(separator: ":").last.flatMap { UInt16($0) })
        let inbox = Inbox()
        let socket = try UDPSocket(host: "127.0.0.1", port: 0) { bytes, _ in inbox.add(bytes) }
        defer { socket.close() }

        let peerKey = SigningKey.generate()
        let peer = try await RawPeer(port: port, identity: peerKey)
        #expect(await peer.waitUntilEstablished())
        var channel = try #require(peer.datagramChannel())
        // The route first: once the node answers the channels with a reconciliation, it has taken both (a
        // session's messages are handled in order).
        peer.send(.datagrams(port: socket.address.port, index: 42))
        peer.send(.channels([seoul.id]))
        let nodeIndex = try await #require(Self.datagramIndex(from: peer))
        #expect(
            await ReconnectionTests.eventually {
                peer.messages.contains { if case .reconcile = $0 { true } else { false } }
            })

        // The node's own small message reaches the peer as one datagram under the session's keys.
        try await seoul.send(.text("udp로 가요"))
        #expect(await ReconnectionTests.eventually { !inbox.all.isEmpty })
        let first = try #require(inbox.all.first)
        #expect(DatagramChannel.receiverIndex(of: first) == 42)
        let openedFirst = channel.open(first)
        let opened = try #require(openedFirst)
        guard case .batch(_, let documents, _, _) = try GossipMessage(wireBytes: opened) else {
            Issue.record("a datagram holds a batch")
            return
        }
        let contents = try documents.map { bytes -> MessageContent? in
            guard case .message(let message) = try Document(verifying: bytes).body else { return nil }
            return message.content
        }
        #expect(contents == [.text("udp로 가요")])

        // The peer's document as a datagram, then the same datagram replayed, then one with a flipped bit.
        let document = try Document.sign(
            .message(Message(channel: seoul.id, senderName: "peer", content: .text("한 번만"))), created: 5, by: peerKey)
        let batch = GossipMessage.batch(sequence: 1, documents: [document.bytes], acknowledges: [])
        let sealed = channel.seal(batch.wireBytes, receiverIndex: nodeIndex)
        let datagram = try #require(sealed)
        let sealedAgain = channel.seal(batch.wireBytes, receiverIndex: nodeIndex)
        var forged = try #require(sealedAgain)
        forged[forged.count - 3] ^= 0x10
        let destination = try #require(SocketAddress(host: "127.0.0.1", port: port))
        for bytes in [datagram, datagram, forged] { #expect(socket.send(bytes, to: destination)) }

        let dropped = await ReconnectionTests.eventually { await node.peers().first?.datagramsDropped == 2 }
        let counted = await node.peers().first?.datagramsDropped
        #expect(dropped, "dropped \(String(describing: counted))")
        #expect(await ReconnectionTests.eventually { (try? node.store.documentCount(in: seoul.id)) == 2 })
        #expect(await ReconnectionTests.eventually { Self.acknowledgements(in: peer.messages).contains(1) })
        #expect(Self.acknowledgements(in: peer.messages).filter { $0 == 1 }.count == 1, "acknowledged once")
        let info = try #require(await node.peers().first)
        #expect(info.refused == 0)
        await node.stop()
    }

    @Test func aDatagramNamesTheSocketThatSentIt() async throws {
        let senders = Senders()
        let receiver = try UDPSocket(host: "127.0.0.1", port: 0) { _, from in senders.add(from) }
        defer { receiver.close() }
        let sender = try UDPSocket(host: "127.0.0.1", port: 0) { _, _ in }
        defer { sender.close() }
        #expect(sender.send([1, 2, 3], to: receiver.address))
        #expect(await ReconnectionTests.eventually { !senders.all.isEmpty })
        let from = try #require(senders.all.first)
        #expect(from == SocketAddress(host: "127.0.0.1", port: sender.address.port))
        #expect(from.host == "127.0.0.1" && from.description == "127.0.0.1:\(sender.address.port)")
        #expect(SocketAddress(host: "10.0.0.256", port: 1) == nil && SocketAddress("localhost:7") != nil)
    }

    @Test func datagramsSentTogetherArriveEachAtItsOwnAddress() async throws {
        let (first, second) = (Inbox(), Inbox())
        let one = try UDPSocket(host: "127.0.0.1", port: 0) { bytes, _ in first.add(bytes) }
        defer { one.close() }
        let two = try UDPSocket(host: "127.0.0.1", port: 0) { bytes, _ in second.add(bytes) }
        defer { two.close() }
        let sender = try UDPSocket(host: "127.0.0.1", port: 0) { _, _ in }
        defer { sender.close() }
        // More than one system call takes (64), with lengths that differ, alternating between the two.
        let datagrams = (0..<70).map { index in
            (bytes: [UInt8](repeating: UInt8(index), count: 1 + index * 3), to: index % 2 == 0 ? one.address : two.address)
        }
        #expect(sender.send(datagrams).isEmpty, "none refused")
        #expect(await ReconnectionTests.eventually { first.all.count == 35 && second.all.count == 35 })
        let expected = datagrams.map(\.bytes)
        #expect(Set(first.all) == Set(expected.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)))
        #expect(Set(second.all) == Set(expected.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)))
        #expect(sender.traffic.sent == expected.reduce(0) { $0 + $1.count })
        // A datagram the system refuses (too long for UDP) costs only itself: those after it still go.
        let tooLong = (bytes: [UInt8](repeating: 1, count: 70_000), to: one.address)
        #expect(sender.send([datagrams[0], tooLong, datagrams[2]]) == [1])
        #expect(await ReconnectionTests.eventually { first.all.count == 37 })
        sender.close()
        #expect(sender.send(datagrams) == Array(0..<70), "a closed socket sends nothing")
    }

    /// The senders a UDP socket of the test heard from.
    final class Senders: @unchecked Sendable {
        private let lock = NSLock()
        private var addresses: [SocketAddress] = []
        func add(_ address: SocketAddress) { lock.withLock { addresses.append(address) } }
        var all: [SocketAddress] { lock.withLock { addresses } }
    }

    static func datagramIndex(from peer: RawPeer) async -> UInt32? {
        var index: UInt32?
        _ = await ReconnectionTests.eventually {
            for case .datagrams(_, let announced) in peer.messages { index = announced }
            return index != nil
        }
        return index
    }

    static func acknowledgements(in messages: [GossipMessage]) -> [UInt64] {
        messages.flatMap { message -> [UInt64] in
            switch message {
            case .acknowledge(let sequences), .batch(_, _, let sequences, _): sequences
            case .channels, .reconcile, .request, .reconciled, .datagrams, .blobWant, .blobHave, .chunkRequest, .chunk,
                .listening, .membership:
                []
            }
        }
    }
}
