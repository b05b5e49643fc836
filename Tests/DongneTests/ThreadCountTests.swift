import Dongne
import DongneSystem
import Foundation
import Testing

/// A node runs the same threads whatever its number of peers: every connection is a non-blocking socket on
/// the node's one event loop (docs/ARCHITECTURE.md lists the threads).
@Suite struct ThreadCountTests {
    /// The node's threads by the name the kernel shows, `/proc/PID/task/*/comm`.
    static func threads(of pid: Int32) -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var names: [String: Int] = [:]
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8) else {
                continue  // a thread that ended meanwhile
            }
            names[name.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += 1
        }
        return names
    }

    /// Threads of the Swift runtime's and libdispatch's shared pools (`com.apple.root.…`, of which the kernel
    /// keeps the last 15 bytes): as many as the process's concurrent work asks for, up to a bound set by the
    /// processor count, not by peers.
    static func isSharedPool(_ name: String) -> Bool {
        // Every quality of service has its threads: the node reads Korea's borders at start on a utility one.
        name.hasSuffix("-qos") || name.hasSuffix("qos.overcommit") || name.hasPrefix("com.apple.root")
    }

    /// The peers' own loop: other tests' raw peers (a flood, say) do not slow these handshakes.
    static let loop = try! EventLoop(name: "test-200-peers")

    /// `count` raw peers, each from a loopback address of its own from `first` on (the node limits how many
    /// sessions one host may have).
    static func connect(_ count: Int, to port: Int, first: Int = 1) async throws -> [RawPeer] {
        try await withThrowingTaskGroup(of: RawPeer.self) { group in
            for n in first..<(first + count) {
                group.addTask {
                    try await RawPeer(
                        port: UInt16(port), identity: SigningKey.generate(), from: "127.0.\(n / 250).\(n % 250 + 1)",
                        keepsAlive: true, loop: loop)
                }
            }
            var peers: [RawPeer] = []
            for try await peer in group { peers.append(peer) }
            return peers
        }
    }

    static func joined(_ node: NodeProcess) -> Int {
        node.lines.filter { $0["event"] as? String == "peer-joined" }.count
    }

    @Test func aNodeWithTwoHundredPeersRunsTheThreadsItRunsWithOne() async throws {
        let node = try NodeProcess(name: "스레드", extra: [])
        defer { node.stop() }
        let port = try await node.listeningPort()

        let first = try await Self.connect(1, to: port)
        #expect(
            await first[0].waitUntilEstablished(seconds: 20),
            "the node said: \(node.lines.filter { ($0["event"] as? String ?? "").hasPrefix("peer") })")
        #expect(await node.waitFor { _ in Self.joined(node) == 1 })
        // Once the node answered a line, its input thread has named itself (a thread is named from within).
        node.type("/peers")
        #expect(await node.waitFor { _ in node.lines.contains { $0["event"] as? String == "peer" } })
        let withOne = Self.threads(of: node.pid)

        // In groups of 10, each established before the next dials: a handshake costs milliseconds in a debug
        // build, and under the loaded full suite a group of 20 once outlasted the node's 10 s handshake deadline
        // (three runs in five; never alone, even beside two busy loops).
        var more: [RawPeer] = []
        for _ in 0..<20 {
            let group = try await Self.connect(more.isEmpty ? 9 : 10, to: port, first: 2 + more.count)
            for peer in group {
                #expect(
                    await peer.waitUntilEstablished(seconds: 20),
                    "peer \(more.count + 2): \(peer.state); group: \(group.map(\.state)); the node said: \(node.lines.filter { ($0["event"] as? String ?? "").hasPrefix("peer-refused") }.suffix(5))")
            }
            more += group
        }
        #expect(await node.waitFor { _ in Self.joined(node) == 200 })
        let withTwoHundred = Self.threads(of: node.pid)
        node.type("/peers")
        #expect(await node.waitFor { _ in node.lines.filter { $0["event"] as? String == "peer" }.count == 201 })

        let own = { (threads: [String: Int]) in threads.filter { !Self.isSharedPool($0.key) } }
        #expect(own(withTwoHundred) == own(withOne), "one peer: \(withOne); 200 peers: \(withTwoHundred)")
        let pool = { (threads: [String: Int]) in threads.filter { Self.isSharedPool($0.key) }.values.reduce(0, +) }
        #expect(pool(withTwoHundred) <= 2 * ProcessInfo.processInfo.activeProcessorCount + 4, "\(withTwoHundred)")
        for peer in first + more { _ = peer }  // kept open until here
    }
}
