import Dongne
import DongneNet
import DongneSystem
import DongneTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import dongne

/// `dongne node` as a service runs it, and its local API as scripts and programs use it.
@Suite struct HeadlessNodeTests {
    /// Ready and stopping reach systemd's notify socket; scripts send and read through the socket with exit codes
    /// they can trust; SIGTERM stops the node cleanly, after which the scripts say no node runs.
    @Test func aServiceNodeTellsSystemdAndAnswersScriptsUntilSIGTERM() async throws {
        let notify = try NotifySocket()
        defer { notify.close() }
        // A watchdog of 0.4 s: the node is to say it is alive every 0.2 s, from its loop.
        let service = try ServiceNode(environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000"])
        defer { service.stop() }
        let ready = try #require(await notify.receive(), "READY=1 within 20 s: \(service.errors())")
        #expect(ready.hasPrefix("READY=1\nSTATUS=running: 민지 ("), "\(ready)")
        #expect(await notify.receive() == "WATCHDOG=1")
        #expect(await notify.receive() == "WATCHDOG=1")

        let sent = try await REPLProcess.run(["send", "서울특별시", "스크립트에서 인사", "--data", service.directory], input: "")
        #expect(sent.status == 0, "\(sent.errors)")
        #expect(sent.output.hasPrefix("sent "))
        let history = try await REPLProcess.run(["history", "서울특별시", "--data", service.directory], input: "")
        #expect(history.status == 0 && history.output.hasSuffix(": 스크립트에서 인사\n"), "\(history)")
        let dated = try Regex(#"^\d{4}-\d\d-\d\d \d\d:\d\d 민지 \([a-z0-9]{8}\): "#)
        #expect(history.output.split(separator: "\n").allSatisfy { $0.contains(dated) }, "each line starts with its time")
        // The uptime counts from the node's start, not from the first status request (as it once did): a second
        // after READY=1, it is at least 1.
        let readyAt = ContinuousClock.now
        _ = await LocalAPIContractTests.eventually { ContinuousClock.now - readyAt > .milliseconds(1_100) }
        let status = try await REPLProcess.run(["status", "--json", "--data", service.directory], input: "")
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any])
        #expect(fields["name"] as? String == "민지" && (fields["fingerprint"] as? String)?.count == 52)
        #expect((fields["uptimeSeconds"] as? Int ?? 0) >= 1, "\(status.output)")
        let refused = try await REPLProcess.run(["send", "서울특별시", " ", "--data", service.directory], input: "")
        #expect(refused.status == 1 && refused.errors.contains("the message is empty"), "\(refused)")

        kill(service.pid, SIGTERM)
        var afterTerm = await notify.receive()
        // Watchdogs until then, however many came, for 30 s at most (a node that ignored SIGTERM pings on).
        let deadline = ContinuousClock.now + .seconds(30)
        while afterTerm == "WATCHDOG=1", ContinuousClock.now < deadline { afterTerm = await notify.receive() }
        #expect(afterTerm == "STOPPING=1")
        #expect(await service.waitForExit() == 0)
        #expect(service.errors().contains("dongne: notice: stopped"), "\(service.errors())")
        let after = try await REPLProcess.run(["status", "--data", service.directory], input: "")
        #expect(after.status == 3 && after.errors.contains("no node answers at"), "\(after)")
        #expect(!FileManager.default.fileExists(atPath: service.directory + "/api.sock"), "the socket is removed")
    }

    /// A service manager that stops reading its notify socket cannot freeze the node: once the socket's queue is
    /// full, the watchdog's notifications are dropped, and the node goes on answering.
    @Test func aManagerThatStopsReadingNotificationsDoesNotFreezeTheNode() async throws {
        let notify = try NotifySocket(silent: true)
        defer { notify.close() }
        // The test fills the queue and nothing reads it: the watchdog, every 10 ms, meets a full queue.
        let service = try ServiceNode(environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "20000"])
        defer { service.stop() }
        #expect(await service.waitForLog("node started"), "\(service.errors())")
        #expect(notify.fill(), "the queue fills up")
        let sent = try await REPLProcess.run(["send", "서울특별시", "아직 살아 있어요", "--data", service.directory], input: "")
        #expect(sent.status == 0, "\(sent.errors)")
        let status = try await REPLProcess.run(["status", "--data", service.directory], input: "")
        #expect(status.status == 0, "\(status.errors)")
    }

    /// `READY=1` is not dropped when the manager's queue is full for a moment: the node waits for room (up to
    /// a few seconds), where a dropped one would have systemd time the start out.
    @Test func readyWaitsForRoomInAFullNotificationQueue() async throws {
        let notify = try NotifySocket(silent: true)
        defer { notify.close() }
        #expect(notify.fill(), "the queue fills up")
        let service = try ServiceNode(environment: ["NOTIFY_SOCKET": notify.path])
        defer { service.stop() }
        // Logged just before READY=1 is sent: from there the node waits for room, 5 s at most. Watched on a
        // thread, not the pool, so that a pool busy with other tests cannot make this test miss the window.
        notify.startReading(once: { service.errors().contains("node started") })
        var ready: String?
        while ready == nil, let next = await notify.receive() { if next.hasPrefix("READY=1") { ready = next } }
        #expect(ready != nil, "READY=1 arrived once there was room")
    }

    /// SIGTERM in the middle of a burst of sends (250, within the 256 a client may have unanswered): every send the
    /// node answered `ok` is in its store when it starts again, and the node stops cleanly (exit 0) with the burst
    /// cut short.
    @Test func SIGTERMDuringABurstLosesNothingTheNodeAcknowledged() async throws {
        let service = try ServiceNode()
        defer { service.stop() }
        #expect(await service.waitForLog("node started"), "\(service.errors())")
        let descriptor = try #require(LocalListener.dial(service.directory + "/api.sock"))
        defer { close(descriptor) }
        let burst = (0..<250).map { #"{"id":\#($0),"op":"send","channel":"서울특별시","text":"연달아 \#($0)"}"# + "\n" }
        let writer = Thread {
            for line in burst {
                let bytes = Array(line.utf8)
                guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 else { return }
            }
        }
        writer.start()
        let pid = service.pid
        let acknowledged = await offPool { Self.readAcknowledgements(from: descriptor, terminatingAfter: 50, pid: pid) }
        #expect(await service.waitForExit() == 0, "\(service.errors())")
        #expect(acknowledged.count >= 50 && acknowledged.count < 250, "cut short: \(acknowledged.count) acknowledged")
        let again = try ServiceNode(directory: service.directory)
        defer { again.stop(keepingData: true) }
        #expect(await again.waitForLog("node started"), "\(again.errors())")
        let history = try await REPLProcess.run(["history", "서울특별시", "--limit", "1000", "--data", service.directory], input: "")
        let stored = Set(history.output.split(separator: "\n").compactMap { $0.split(separator: " ").last.flatMap { Int($0) } })
        let lost = acknowledged.filter { !stored.contains($0) }
        #expect(lost.isEmpty, "acknowledged and lost: \(lost)")
    }

    /// The ids of the sends answered `ok` on `descriptor` until the node hangs up; SIGTERM to `pid` once
    /// `count` are in. Blocks in `recv` (run it off Swift's pool).
    static func readAcknowledgements(from descriptor: Int32, terminatingAfter count: Int, pid: pid_t) -> [Int] {
        var acknowledged: [Int] = []
        var buffered: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var terminated = false
        while true {
            let received = recv(descriptor, &chunk, chunk.count, 0)
            if received <= 0 { return acknowledged }
            buffered += chunk.prefix(received)
            while let end = buffered.firstIndex(of: 0x0A) {
                let object = try? JSONSerialization.jsonObject(with: Data(buffered[..<end])) as? [String: Any]
                buffered.removeSubrange(...end)
                if object?["ok"] as? Bool == true, let id = object?["id"] as? Int { acknowledged.append(id) }
            }
            if !terminated && acknowledged.count >= count {
                kill(pid, SIGTERM)
                terminated = true
            }
        }
    }

    /// A service that cannot start exits 1 with one error line that says what failed and what to do: a port
    /// another program holds, a data folder this user may not write.
    @Test func aNodeThatCannotStartSaysWhatToDo() async throws {
        let folder = NSTemporaryDirectory() + "dongne-cannot-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(holder, $0, &length) } }
        listen(holder, 1)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let taken = try await CommandLineTests.run([
            "node", "--data", folder + "/a", "--listen", "127.0.0.1", "--port", "\(port)", "--no-dnssd",
        ])
        #expect(taken.status == 1 && taken.errors.contains("cannot start: cannot listen on 127.0.0.1 port \(port)"), "\(taken)")
        #expect(taken.errors.contains("give another with --port"), "\(taken.errors)")
        try Data().write(to: URL(fileURLWithPath: folder + "/file"))
        let unwritable = try await CommandLineTests.run(["node", "--data", folder + "/file/data", "--port", "off", "--no-dnssd"])
        #expect(unwritable.status == 1 && unwritable.errors.contains("cannot create the data directory"), "\(unwritable)")
        #expect(unwritable.errors.contains("give a folder this user may write with --data DIR"), "\(unwritable.errors)")
    }

    /// The kernel's record of the connecting process's user decides, not the socket file's mode: with the file
    /// opened to everyone, another user's process is still refused.
    @Test func anotherUsersProgramIsRefusedEvenWhenTheSocketIsOpenToIt() async throws {
        let folder = "/tmp/dongne-uid-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        chmod(folder, 0o755)
        let socket = folder + "/api.sock"
        let service = try ServiceNode(extra: ["--socket", socket])
        defer { service.stop() }
        #expect(await service.waitForLog("node started"), "\(service.errors())")
        chmod(socket, 0o666)
        let nobody = try await Self.connectAs(uid: 65534, to: socket)
        #expect(nobody.contains(#""code":"other-user""#), "\(nobody)")
        #expect(await service.waitForLog("refused a local API connection from user 65534"))
        let own = try await Self.connectAs(uid: getuid(), to: socket)
        #expect(own.contains(#""event":"hello""#), "\(own)")
    }

    /// The first line a process of user `uid` reads from the socket (setpriv switches the user).
    static func connectAs(uid: uid_t, to socket: String) async throws -> String {
        try await offPool { try blockingConnectAs(uid: uid, to: socket) }
    }

    private static func blockingConnectAs(uid: uid_t, to socket: String) throws -> String {
        let script = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1]); "
            + "print(s.makefile().readline(), end='')"
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid", "\(uid)", "--regid", "\(uid)", "--clear-groups", "/usr/bin/python3", "-c", script, socket]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

/// The local API served from a node in this process, beside an in-process listener on the same query.
@Suite struct LocalAPIContractTests {
    /// How long a test's client waits for the node to say something: long, since the whole suite shares this
    /// machine's cores with the node in process, and a wait that ends is a failure however slow the machine.
    static let patience = 60

    /// The Python example (standard library only) prints the same snapshots, change for change, as a listener
    /// in the node's own process.
    @Test func thePythonExampleSeesTheSameSnapshotsAsAnInProcessListener() async throws {
        let served = try await ServedNode.start()
        defer { served.stop() }
        let seoul = try await served.test.node.join("서울특별시")
        try await seoul.send(.text("먼저 있던 글"))
        let inProcess = Mutex<[String]>([])
        let registration = try seoul.messages.whereField(.isActive, isEqualTo: true).order(by: .created).limit(toLast: 3)
            .addSnapshotListener { snapshot, _ in
                guard let snapshot else { return }
                let line = (try? ReferenceJSON.line(ReferenceJSON.snapshot(snapshot, listener: 1, ReferenceJSON.message))) ?? ""
                inProcess.withLock { $0.append(line) }
            }
        defer { registration.remove() }
        let example = try PythonExample(socket: served.path, channel: "서울특별시", limit: 3)
        defer { example.stop() }
        #expect(await example.waitForLines(1), "the first snapshot: \(example.errors())")
        for text in ["하나", "둘", "셋", "넷"] { _ = try await seoul.send(.text(text)) }
        let firstID = try #require(try await seoul.messages.order(by: .created).limit(toLast: 5).getDocuments().documents.last?.id)
        try await seoul.retract(firstID)
        let expected = await Self.eventually { inProcess.withLock { $0.count } >= 6 }
        #expect(expected, "\(inProcess.withLock { $0 })")
        let count = inProcess.withLock { $0.count }
        #expect(await example.waitForLines(count))
        let theirs = example.lines().map(Self.normalized)
        let ours = inProcess.withLock { $0 }.map(Self.normalized)
        #expect(theirs == ours)
    }

    /// A client that stops reading is cut off once 1 MiB waits for it; the other client and the node go on.
    @Test func aClientThatStopsReadingIsCutOffAndTheOthersGoOn() async throws {
        let served = try await ServedNode.start()
        defer { served.stop() }
        let seoul = try await served.test.node.join("서울특별시")
        for index in 0..<200 { _ = try await seoul.send(.text("채널을 채우는 글 \(index) " + String(repeating: "가", count: 300))) }
        let stuck = try RawClient(path: served.path)
        defer { stuck.close() }
        // 64 listeners, each first snapshot holding all 200 messages (~1 KiB each): far more than 1 MiB, unread.
        for id in 1...64 {
            stuck.write(#"{"id":\#(id),"op":"listen","channel":"서울특별시","limit":1000}"#)
        }
        #expect(await Self.eventually { served.server.clientCount == 0 }, "the stuck client is cut off")
        let path = served.path
        let last = try await offPool { () throws -> String? in
            let reader = try LocalAPIConnection(path: path, patience: Self.patience)
            _ = try reader.request(["op": "send", "channel": "서울특별시", "text": "아직 살아 있어요"])
            let history = try reader.request(["op": "history", "channel": "서울특별시", "limit": 1])
            return (history["documents"] as? [[String: Any]])?.last?["text"] as? String
        }
        #expect(last == "아직 살아 있어요")
    }

    /// The hand-written snapshot line says exactly what Foundation's encoding of the same snapshot says, for text
    /// that needs escaping and for locations.
    @Test func theHandWrittenSnapshotLineEqualsFoundationsEncoding() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        try await seoul.send(.text("따옴표 \" 역슬래시 \\ 줄\n바꿈\t탭 😀 <U+202E> /"))
        try await seoul.send(.location(latitude: 37.5759, longitude: 126.969))
        let snapshot = try await seoul.messages.order(by: .created).getDocuments()
        let fast = LocalAPIJSON.snapshotLine(snapshot, listener: 7)
        #expect(fast.last == 0x0A && !fast.dropLast().contains(0x0A), "one line")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(fast.dropLast())) as? NSDictionary)
        let reference = ReferenceJSON.snapshot(snapshot, listener: 7, ReferenceJSON.message) as NSDictionary
        #expect(parsed == reference, "\(String(decoding: fast, as: UTF8.self))")
    }

    /// Requests that are not the protocol get an error each, and the connection goes on.
    @Test func badRequestsAreAnsweredWithTheirCodeAndTheConnectionGoesOn() async throws {
        let served = try await ServedNode.start()
        defer { served.stop() }
        let path = served.path
        let codes = try await offPool { () throws -> [String?] in
            let client = try LocalAPIConnection(path: path, patience: Self.patience)
            let requests: [[String: Any]] = [
                ["op": "fly"], ["op": "send", "channel": "서울특별시"],
                ["op": "send", "channel": "서울특별시", "text": String(repeating: "가", count: 2_000)],
                ["op": "unlisten", "listener": 99], ["op": "status"],
            ]
            return try requests.map { request in
                let answer = try client.request(request)
                return answer["ok"] as? Bool == true ? "ok" : (answer["error"] as? [String: Any])?["code"] as? String
            }
        }
        #expect(codes == ["unknown-op", "bad-request", "text-too-long", "no-such-listener", "ok"])
    }

    static func normalized(_ line: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return line }
        var copy = object
        copy["listener"] = nil
        let data = try? JSONSerialization.data(withJSONObject: copy, options: [.sortedKeys])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? line
    }

    static func eventually(seconds: Int = 20, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}

/// A node of this process served through the local API at a socket in its data directory.
struct ServedNode {
    let test: TestNode
    let server: LocalAPIServer
    var path: String { test.directory + "/api.sock" }

    static func start(name: String = "민지", listen: Bool = false) async throws -> ServedNode {
        let test = try await TestNode.start(name: name, listen: listen)
        let server = try LocalAPIServer(node: test.node, path: test.directory + "/api.sock") { _ in }
        return ServedNode(test: test, server: server)
    }

    func stop() {
        server.close()
        test.stop()
    }
}

/// A client that writes requests and never reads.
final class RawClient {
    private let descriptor: Int32

    init(path: String) throws {
        guard let descriptor = LocalListener.dial(path) else { throw POSIXError(.ECONNREFUSED) }
        self.descriptor = descriptor
    }

    func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func close() { Glibc.close(descriptor) }
}

/// `examples/local-api/subscribe.py --json`, its lines collected.
final class PythonExample: Sendable {
    private let process = SpawnedProcess()
    private let collected = LineCollector()
    private let errorText: ErrorCollector

    init(socket: String, channel: String, limit: Int) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            root.appendingPathComponent("examples/local-api/subscribe.py").path, channel, "--socket", socket,
            "--limit", "\(limit)", "--json",
        ]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        errorText = ErrorCollector(errors.fileHandleForReading)
        collected.read(output.fileHandleForReading)
    }

    func lines() -> [String] { collected.lines }

    func waitForLines(_ count: Int) async -> Bool {
        await LocalAPIContractTests.eventually { lines().count >= count }
    }

    func errors() -> String { process.isRunning ? "" : errorText.text() }

    func stop() {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// `dongne node` in a process of its own, on a data directory of its own.
final class ServiceNode: Sendable {
    let directory: String
    private let process = SpawnedProcess()
    private let errorLines = LineCollector()

    init(
        extra: [String] = [], environment: [String: String] = [:],
        directory: String = NSTemporaryDirectory() + "dongne-service-" + UUID().uuidString
    ) throws {
        self.directory = directory
        process.executableURL = URL(fileURLWithPath: REPLProcess.binary)
        process.arguments = REPLProcess.testArguments(
            ["node", "--data", directory, "--name", "민지", "--port", "0", "--no-dnssd", "--log-level", "info"] + extra)
        var merged = ProcessInfo.processInfo.environment
        merged["JOURNAL_STREAM"] = nil
        merged["NOTIFY_SOCKET"] = nil
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let errors = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        errorLines.read(errors.fileHandleForReading)
    }

    var pid: Int32 { process.processIdentifier }

    func errors() -> String { errorLines.lines.joined(separator: "\n") }

    func waitForLog(_ text: String) async -> Bool {
        await LocalAPIContractTests.eventually(seconds: 30) { errors().contains(text) }
    }

    func waitForExit() async -> Int32? {
        guard await LocalAPIContractTests.eventually(seconds: 30, { !process.isRunning }) else { return nil }
        return process.terminationStatus
    }

    func stop(keepingData: Bool = false) {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if !keepingData { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// A datagram socket where a test plays systemd: what the service sends to NOTIFY_SOCKET arrives here. Like
/// systemd, it reads as datagrams come (on a thread of its own), unless made `silent`, a manager that stopped
/// reading (until ``startReading()``).
final class NotifySocket: Sendable {
    let path = NSTemporaryDirectory() + "dongne-notify-" + UUID().uuidString.prefix(8)
    private let descriptor: Int32
    private let arrived = Mutex<[String]>([])
    private let taken = Mutex(0)
    /// Whether a thread reads (it then closes the socket) and whether the test closed it, under one lock so
    /// that exactly one of them closes the descriptor.
    private let ends = Mutex((reading: false, closed: false))

    init(silent: Bool = false) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        // The reading thread looks whether the test closed the socket this often.
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = Self.address(path)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        if !silent { startReading() }
    }

    /// Reads what comes, from now on, on a thread of its own (once).
    func startReading() {
        let starts = ends.withLock { ends in
            guard !ends.reading && !ends.closed else { return false }
            ends.reading = true
            return true
        }
        guard starts else { return }
        Thread.detachNewThread { [self] in read() }
    }

    /// Starts reading as soon as `condition` holds (or after 60 s), checked every 10 ms on a thread of its own.
    func startReading(once condition: @escaping @Sendable () -> Bool) {
        Thread.detachNewThread { [self] in
            let deadline = ContinuousClock.now + .seconds(60)
            while !condition(), ContinuousClock.now < deadline { usleep(10_000) }
            startReading()
        }
    }

    private static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        return address
    }

    private func read() {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !ends.withLock({ $0.closed }) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 { arrived.withLock { $0.append(String(decoding: buffer.prefix(count), as: UTF8.self)) } }
        }
        Glibc.close(descriptor)
    }

    /// The next notification, in the order they came, or nil after 20 s.
    func receive() async -> String? {
        let next = taken.withLock { $0 }
        guard await LocalAPIContractTests.eventually({ arrived.withLock { $0.count } > next }) else { return nil }
        taken.withLock { $0 += 1 }
        return arrived.withLock { $0[next] }
    }

    /// Fills the socket's queue with probes, sent without waiting until one does not fit (at most 100,000, in
    /// case a queue never fills); whether it is full. For a `silent` socket.
    func fill() -> Bool {
        let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { Glibc.close(sender) }
        var address = Self.address(path)
        let probe = Array("PROBE=1".utf8)
        for _ in 0..<100_000 {
            let sent = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(sender, probe, probe.count, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if sent < 0 { return errno == EAGAIN }
        }
        return false
    }

    /// Stops reading (the thread closes the socket within 0.1 s) and removes the socket's file.
    func close() {
        let nobodyReads = ends.withLock { ends in
            ends.closed = true
            return !ends.reading
        }
        if nobodyReads { Glibc.close(descriptor) }
        unlink(path)
    }
}

/// The lines a child process writes to a pipe, read on a thread of their own until the pipe closes.
final class LineCollector: Sendable {
    private let collected = Mutex<[String]>([])

    var lines: [String] { collected.withLock { $0 } }

    func read(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var buffered = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                buffered += chunk
                while let end = buffered.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffered[buffered.startIndex..<end], as: UTF8.self)
                    buffered = Data(buffered[(end + 1)...])
                    collected.withLock { $0.append(line) }
                }
            }
        }
    }
}

/// The service units in packaging/systemd, as systemd reads them.
@Suite struct ServiceUnitTests {
    /// `systemd-analyze verify` accepts both units with nothing to say (it only warns, and exits 0, for a
    /// setting it cannot parse: silence is the test), with the built binary where the unit expects dongne.
    @Test func systemdAcceptsTheUnits() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let folder = NSTemporaryDirectory() + "dongne-units-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var paths: [String] = []
        for (name, binary) in [("dongne.service", "%h/.local/bin/dongne"), ("dongne-relay.service", "/usr/local/bin/dongne")] {
            let unit = try String(contentsOf: root.appendingPathComponent("packaging/systemd/" + name), encoding: .utf8)
            #expect(unit.contains("Type=notify") && unit.contains("WatchdogSec=") && unit.contains("NoNewPrivileges=yes"))
            #expect(unit.contains("ExecStart=\(binary) node"))
            let path = folder + "/" + name
            try unit.replacingOccurrences(of: binary, with: REPLProcess.binary).write(toFile: path, atomically: true, encoding: .utf8)
            paths.append(path)
        }
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        process.arguments = ["verify", "--man=no"] + paths
        let said = Pipe()
        process.standardOutput = said
        process.standardError = said
        try process.run()
        let output = await offPool {
            let output = String(decoding: said.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return output
        }
        #expect(process.terminationStatus == 0 && output.isEmpty, "\(output)")
    }
}

/// REPLs attached to a node that runs as a service: each with its own view, coming and going while the node keeps
/// carrying the channel for a peer.
@Suite struct AttachedREPLTests {
    @Test func twoREPLsAttachToAServiceNodeAndChatWithAPeerWhileTheyComeAndGo() async throws {
        let peer = try NodeProcess(name: "준호", extra: [])
        defer { peer.stop() }
        let port = try await peer.listeningPort()
        let service = try ServiceNode(extra: ["--peer", "127.0.0.1:\(port)"])
        defer { service.stop() }
        #expect(await service.waitForLog("peer joined"), "\(service.errors())")

        let first = try NodeProcess(name: "ignored", extra: [], directory: service.directory)
        let second = try NodeProcess(name: "ignored", extra: [], directory: service.directory)
        defer { second.stop(keepingData: true) }
        for repl in [first, second] {
            #expect(await repl.waitFor { $0["event"] as? String == "started" && $0["name"] as? String == "민지" })
            #expect(await repl.waitFor { $0["event"] as? String == "joined" })
        }
        first.type("첫 번째 창에서 인사")
        #expect(await peer.waitFor { $0["text"] as? String == "첫 번째 창에서 인사" && $0["name"] as? String == "민지" })
        #expect(await second.waitFor { $0["text"] as? String == "첫 번째 창에서 인사" }, "the other REPL sees it too")
        peer.type("둘 다 보이나요?")
        for repl in [first, second] { #expect(await repl.waitFor { $0["text"] as? String == "둘 다 보이나요?" }) }

        first.stop(keepingData: true)  // /quit: this REPL leaves, the node does not
        peer.type("한 창은 나갔어요")
        #expect(await second.waitFor { $0["text"] as? String == "한 창은 나갔어요" })
        #expect(!peer.lines.contains { $0["event"] as? String == "peer-left" }, "the node stayed")
        let third = try NodeProcess(name: "ignored", extra: [], directory: service.directory)
        defer { third.stop(keepingData: true) }
        #expect(await third.waitFor { $0["text"] as? String == "한 창은 나갔어요" }, "a new REPL sees the channel's last page")

        kill(service.pid, SIGTERM)
        #expect(await service.waitForExit() == 0)
        for repl in [second, third] {
            #expect(await repl.waitFor { ($0["message"] as? String)?.hasPrefix("the node stopped") == true })
        }
        #expect(await peer.waitFor { $0["event"] as? String == "peer-left" })
    }

    /// In a terminal: the prompt, Tab completion and a sent line, from a REPL attached to a service node.
    @Test func anAttachedREPLInATerminalCompletesSendsAndQuitsWithoutStoppingTheNode() async throws {
        let service = try ServiceNode()
        defer { service.stop() }
        #expect(await service.waitForLog("node started"), "\(service.errors())")
        let terminal = try Tmux()
        defer { terminal.close() }
        try terminal.start("\(REPLProcess.binary) --data \(service.directory) --channel 서울특별시; sleep 30")
        #expect(await terminal.waitFor { $0.contains { $0.hasPrefix("* dongne: you are 민지 (") } })
        #expect(await terminal.waitFor { $0.last == "[서울특별시]" })
        try terminal.keys("/pe")
        try terminal.press("Tab")
        #expect(await terminal.waitFor { $0.last == "[서울특별시] /peers" })
        try terminal.press("C-u")
        try terminal.keys("터미널에서 보내요", enter: true)
        #expect(await terminal.waitFor { $0.contains { $0.hasPrefix("#") && $0.hasSuffix("터미널에서 보내요") } })
        try terminal.keys("/quit", enter: true)
        let sent = try await REPLProcess.run(["history", "서울특별시", "--data", service.directory], input: "")
        #expect(sent.output.hasSuffix(": 터미널에서 보내요\n"), "the node still runs: \(sent)")
    }
}
