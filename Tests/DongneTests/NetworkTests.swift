import Dongne
import DongneNet
import DongneStore
import Foundation
import Testing
import DongneSystem
import DongneTestSupport

/// Real processes on real sockets: `dongne` REPLs linked with `--peer` over loopback.
@Suite(.serialized) struct NetworkTests {
    @Test func threeNodesChatThroughTheirREPLsAcrossTwoHops() async throws {
        let a = try NodeProcess(name: "민지", extra: [])
        defer { a.stop() }
        let port = try await a.listeningPort()
        let b = try NodeProcess(name: "준호", extra: ["--peer", "127.0.0.1:\(port)"])
        defer { b.stop() }
        let portB = try await b.listeningPort()
        let c = try NodeProcess(name: "지수", extra: ["--peer", "127.0.0.1:\(portB)"])
        defer { c.stop() }
        #expect(await a.waitFor { $0["event"] as? String == "peer-joined" })
        #expect(await c.waitFor { $0["event"] as? String == "peer-joined" })

        a.type("안녕하세요 from A")
        for node in [b, c] {  // c hears it through b
            #expect(
                await node.waitFor { $0["event"] as? String == "message" && $0["text"] as? String == "안녕하세요 from A" })
        }
        c.type("/location 37.5665 126.978")
        #expect(await a.waitFor { $0["event"] as? String == "message" && $0["latitude"] as? Double == 37.5665 })
        b.type("/peers")
        #expect(await b.waitFor { $0["event"] as? String == "peer" && $0["name"] as? String == "지수" })
    }

    @Test func aNodeThatWasStoppedCatchesUpWhenItStartsAgain() async throws {
        let a = try NodeProcess(name: "민지", extra: [])
        defer { a.stop() }
        let port = try await a.listeningPort()
        let directory = NSTemporaryDirectory() + "dongne-net-" + UUID().uuidString
        let b = try NodeProcess(name: "준호", extra: ["--peer", "127.0.0.1:\(port)"], directory: directory)
        #expect(await b.waitFor { $0["event"] as? String == "peer-joined" })
        b.type("before the break")
        #expect(await a.waitFor { $0["text"] as? String == "before the break" })
        b.stop(keepingData: true)
        #expect(await a.waitFor { $0["event"] as? String == "peer-left" })
        for index in 1...3 { a.type("while you were away \(index)") }
        let again = try NodeProcess(name: "준호", extra: ["--peer", "127.0.0.1:\(port)"], directory: directory)
        defer { again.stop() }
        for index in 1...3 {
            #expect(await again.waitFor { $0["text"] as? String == "while you were away \(index)" })
        }
        again.type("back")
        #expect(await a.waitFor { $0["text"] as? String == "back" })
    }

    @Test func twoREPLsExchangeDirectMessagesWithReadFlags() async throws {
        let a = try NodeProcess(name: "민지", extra: [])
        defer { a.stop() }
        let port = try await a.listeningPort()
        let b = try NodeProcess(name: "준호", extra: ["--peer", "127.0.0.1:\(port)"])
        defer { b.stop() }
        b.type("안녕하세요")  // A learns B's name from it
        #expect(await a.waitFor { $0["event"] as? String == "message" && $0["name"] as? String == "준호" })
        a.type("/dm 준호 우리끼리 얘기해요")
        #expect(await a.waitFor { $0["event"] as? String == "direct" && $0["text"] as? String == "우리끼리 얘기해요" })
        #expect(await b.waitFor { $0["event"] as? String == "direct-notice" })
        #expect(!b.lines.contains { $0["text"] as? String == "우리끼리 얘기해요" }, "a notice, not the text, in a channel")
        // Stored by B: a status line, unless B stored it before A's screen first showed it (under load, say);
        // then the message's own line carries the mark already, and no status changed after it.
        #expect(await a.waitFor { line in
            line["event"] as? String == "direct-stored"
                || (line["event"] as? String == "direct" && line["text"] as? String == "우리끼리 얘기해요"
                    && line["pending"] as? Bool == false)
        })
        b.type("/dm 민지")
        #expect(await b.waitFor { $0["event"] as? String == "direct" && $0["text"] as? String == "우리끼리 얘기해요" })
        #expect(await a.waitFor { $0["event"] as? String == "direct-read" }, "shown on B's screen: read")
        b.type("좋아요")  // in the conversation's view, a line goes to A
        #expect(await a.waitFor { $0["event"] as? String == "direct-notice" })
        a.type("/dms")
        #expect(await a.waitFor { $0["event"] as? String == "conversation" && $0["unread"] as? Int == 1 })
        b.type("/join 서울특별시")
        b.type("채널로 돌아왔어요")
        #expect(await a.waitFor { $0["event"] as? String == "message" && $0["text"] as? String == "채널로 돌아왔어요" })
    }

    @Test func aNodeWithAnotherNetworkKeyGetsNoSession() async throws {
        let a = try NodeProcess(name: "민지", extra: [])
        defer { a.stop() }
        let port = try await a.listeningPort()
        let outsider = try NodeProcess(name: "외부인", extra: ["--peer", "127.0.0.1:\(port)", "--network-key", "another"])
        defer { outsider.stop() }
        #expect(await outsider.waitFor { $0["event"] as? String == "peer-refused" })
        #expect(await a.waitFor { $0["event"] as? String == "peer-refused" }, "the refusal is visible on both ends")
        a.type("비밀")
        outsider.type("/peers")
        #expect(await outsider.waitFor { $0["message"] as? String == "no peers connected" })
        #expect(!outsider.lines.contains { $0["text"] as? String == "비밀" })
        #expect(!a.lines.contains { $0["event"] as? String == "peer-joined" })
    }
}

/// A `dongne` process in a fresh data directory, with `--json`, driven through its standard input.
final class NodeProcess: @unchecked Sendable {
    private let process = SpawnedProcess()
    private let input = Pipe()
    private let lock = NSLock()
    private var received: [[String: Any]] = []
    private var ended = false
    private let directory: String

    init(
        name: String, extra: [String], directory: String = NSTemporaryDirectory() + "dongne-net-" + UUID().uuidString
    ) throws {
        self.directory = directory
        // A REPL that ended by itself has no reader on its input: writing there must fail, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        process.executableURL = URL(fileURLWithPath: REPLProcess.binary)
        process.arguments = REPLProcess.testArguments(
            ["--data", directory, "--name", name, "--port", "0", "--no-dnssd", "--json", "--channel", "서울특별시"] + extra)
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reader = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            var pending = Data()
            while case let chunk = reader.availableData, !chunk.isEmpty {
                pending += chunk
                while let newline = pending.firstIndex(of: 0x0a) {
                    let line = pending[pending.startIndex..<newline]
                    pending = pending[(newline + 1)...]
                    if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                        lock.withLock { received.append(object) }
                    }
                }
            }
            lock.withLock { ended = true }
        }
    }

    var lines: [[String: Any]] { lock.withLock { received } }

    /// Whether its standard output reached its end: every line it printed is in ``lines``.
    private var outputEnded: Bool { lock.withLock { ended } }

    /// What it printed, an event (or a message's text) per line: for a failing wait to say what happened.
    var events: String {
        lines.map { line in
            let what = line["event"] as? String ?? line["text"].map { "text \($0)" } ?? "?"
            let detail = ["reason", "message", "address"].compactMap { line[$0] as? String }.joined(separator: " ")
            return detail.isEmpty ? what : "\(what) (\(detail))"
        }.joined(separator: ", ")
    }

    /// The process's id.
    var pid: Int32 { process.processIdentifier }

    /// Types a line; nothing once the REPL has ended (an attached REPL ends when its node stops).
    func type(_ line: String) {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits until a line satisfies `predicate`, at most 60 s: the suite runs its tests at once, and on a
    /// loaded machine two debug nodes took over 20 s for what takes them a second alone.
    /// Once its output has ended (the process with it), nothing more comes: the wait ends.
    func waitFor(_ predicate: ([String: Any]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if lines.contains(where: predicate) { return true }
            if outputEnded { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return lines.contains(where: predicate)
    }

    func listeningPort() async throws -> Int {
        guard await waitFor({ $0["event"] as? String == "listening" }),
            let address = lines.first(where: { $0["event"] as? String == "listening" })?["address"] as? String,
            let port = Int(address.split(separator: ":").last ?? "")
        else { throw CancellationError() }
        return port
    }

    /// Quits the REPL (killing it if it does not end) and removes its folder unless asked to keep it.
    func stop(keepingData: Bool = false) {
        type("/quit")
        try? input.fileHandleForWriting.close()
        for _ in 0..<500 where process.isRunning { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        if !keepingData { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// Listener metadata becomes real once there are peers: two nodes in this process, over loopback.
@Suite struct NetworkMetadataTests {
    static func node(_ name: String, listen: Bool, peers: [String] = []) async throws -> (Node, String) {
        let directory = NSTemporaryDirectory() + "dongne-meta-" + UUID().uuidString
        let configuration = Configuration.testing(
            dataDirectory: directory, displayName: name, listenPort: listen ? 0 : nil, peers: peers)
        return (try await Node.start(configuration), directory)
    }

    @Test func pendingWritesClearWhenAPeerStoresThemAndReconcilingEndsTheCache() async throws {
        let (a, directoryA) = try await Self.node("민지", listen: true)
        _ = try await a.join("서울특별시")
        let port = try #require(a.listeningAddress?.split(separator: ":").last)
        let (b, directoryB) = try await Self.node("준호", listen: false, peers: ["127.0.0.1:\(port)"])
        defer {
            for directory in [directoryA, directoryB] { try? FileManager.default.removeItem(atPath: directory) }
        }
        let seoul = try await b.join("서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoul.messages.addSnapshotListener(includeMetadataChanges: true, recorder.callback)
        try await seoul.send(.text("확인해 주세요"))
        // Shown as pending before the send returned (sentence 4); the peer's acknowledgement may have cleared
        // it already by then, as `send` waits for the local disk.
        let shownBeforeReturning = recorder.all.flatMap(\.documents)
        #expect(shownBeforeReturning.first { $0.content == .text("확인해 주세요") }?.metadata.hasPendingWrites == true)
        var cleared = false, reconciled = false
        for _ in 0..<2_000 where !(cleared && reconciled) {
            try await Task.sleep(for: .milliseconds(10))
            cleared = recorder.last?.documents.first?.metadata.hasPendingWrites == false
            reconciled = recorder.last?.metadata.isFromCache == false
        }
        #expect(cleared, "a peer acknowledged the message: no longer pending")
        #expect(reconciled, "the channel was reconciled with a peer: no longer from cache only")
        registration.remove()
        await b.stop()
        await a.stop()
    }
}

/// A node keeps dialling the peers it was given, and those it met before.
@Suite struct ReconnectionTests {
    @Test func aNodeDialsAgainWhenItsPeerComesBack() async throws {
        let directoryA = NSTemporaryDirectory() + "dongne-redial-a-" + UUID().uuidString
        let directoryB = NSTemporaryDirectory() + "dongne-redial-b-" + UUID().uuidString
        defer { for directory in [directoryA, directoryB] { try? FileManager.default.removeItem(atPath: directory) } }
        var a: Node? = try await Node.start(Configuration.testing(dataDirectory: directoryA, displayName: "a", listenPort: 0))
        let port = try #require(a?.listeningAddress?.split(separator: ":").last.flatMap { UInt16($0) })
        let b = try await Node.start(
            Configuration.testing(dataDirectory: directoryB, displayName: "b", peers: ["127.0.0.1:\(port)"]))
        #expect(await Self.eventually { await b.peers().count == 1 })
        await a?.stop()
        a = nil
        #expect(await Self.eventually { await b.peers().isEmpty })
        // The same node comes back on the same port: b finds it again by itself.
        let back = try await Node.start(Configuration.testing(dataDirectory: directoryA, displayName: "a", listenPort: port))
        #expect(await Self.eventually(seconds: 10) { await b.peers().count == 1 })
        #expect(try b.store.knownPeers() == ["127.0.0.1:\(port)"], "remembered for the next start")
        await b.stop()
        await back.stop()
    }

    static func eventually(seconds: Int = 5, _ condition: () async -> Bool) async -> Bool {
        for _ in 0..<(seconds * 100) {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

/// A peer holding the network key but sending junk at full speed: refused, counted, cut off and ignored, while
/// two honest nodes keep chatting.
@Suite struct MisbehavingPeerTests {
    @Test func aJunkSenderIsCutOffWhileHonestPeersKeepChatting() async throws {
        let directories = (0..<2).map { _ in NSTemporaryDirectory() + "dongne-junk-" + UUID().uuidString }
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        let a = try await Node.start(Configuration.testing(dataDirectory: directories[0], displayName: "a", listenPort: 0))
        let seoulA = try await a.join("서울특별시")
        let port = try #require(a.listeningAddress?.split(separator: ":").last.flatMap { UInt16($0) })
        let b = try await Node.start(
            Configuration.testing(dataDirectory: directories[1], displayName: "b", peers: ["127.0.0.1:\(port)"]))
        let seoulB = try await b.join("서울특별시")
        #expect(await ReconnectionTests.eventually { await a.peers().count == 1 })

        // Another machine (refusals are charged to the host they come from, and b shares 127.0.0.1 with a).
        let junk = SigningKey.generate()
        let flood = try await RawPeer(port: port, identity: junk, from: "127.0.0.9")
        #expect(await ReconnectionTests.eventually { await a.peers().count == 2 })
        let forged = try Self.forgedDocument(in: seoulA.id)
        let sent = await flood.send(batches: 300, documentsEach: 20, forged: forged, seconds: 5)
        #expect(sent > 0)
        #expect(await ReconnectionTests.eventually(seconds: 10) { await a.peers().map(\.identity) == [b.publicKey] })

        let recorder = Recorder<MessageSnapshot>()
        let registration = try seoulA.messages.addSnapshotListener(recorder.callback)
        try await seoulB.send(.text("아직 잘 들려요?"))
        #expect(
            await ReconnectionTests.eventually {
                recorder.last?.documents.contains { $0.content == .text("아직 잘 들려요?") } == true
            })
        // Shown once its signature holds, stored moments later: wait for the store, then nothing else is there.
        #expect(await ReconnectionTests.eventually { (try? a.store.documentCount(in: seoulA.id)) == 1 })
        #expect(try a.store.documentCount(in: seoulA.id) == 1, "nothing the junk peer sent was stored")

        let again = try await RawPeer(port: port, identity: junk, from: "127.0.0.10")
        #expect(await again.wasRefused(), "the junk identity is ignored for a while, from any host")
        registration.remove()
        await b.stop()
        await a.stop()
    }

    /// A message whose signature was tampered with: it parses, so only the signature check refuses it.
    static func forgedDocument(in channel: ChannelID) throws -> [UInt8] {
        let key = SigningKey.generate()
        var bytes = try Document.sign(
            .message(Message(channel: channel, senderName: "x", content: .text("가짜"))), created: 1, by: key
        ).bytes
        bytes[bytes.count - 1] ^= 1
        return bytes
    }
}
