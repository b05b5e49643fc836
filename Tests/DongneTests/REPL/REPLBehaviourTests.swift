import DongneCore
import DongneStore
import Foundation
import Glibc
import Testing
import DongneTestSupport

@testable import Dongne
@testable import dongne

/// The REPL's habits between nodes, through pipes (`--json`), as a program or a script would see them.
@Suite struct REPLBehaviourTests {
    /// Two `--json` nodes, 민지 (a) and 준호 (b, which dials a), once their session is up.
    static func connectedPair() async throws -> (NodeProcess, NodeProcess) {
        let a = try NodeProcess(name: "민지", extra: [])
        do {
            let b = try NodeProcess(name: "준호", extra: ["--peer", "127.0.0.1:\(try await a.listeningPort())"])
            guard await b.waitFor({ $0["event"] as? String == "peer-joined" }) else {
                b.stop()
                throw CancellationError()
            }
            return (a, b)
        } catch {
            a.stop()
            throw error
        }
    }

    @Test func aDialThatHangsDoesNotHoldUpWhatIsTypedNext() async throws {
        let blackhole = try Blackhole()
        defer { blackhole.close() }
        let a = try NodeProcess(name: "민지", extra: [])
        defer { a.stop() }
        _ = try await a.listeningPort()
        a.type("/connect 127.0.0.1:\(blackhole.port)")
        a.type("바로 보내요")
        // The dial gives up after its timeout; the line typed after it must not have waited for that.
        let failure = { (line: [String: Any]) in
            (line["message"] as? String)?.hasPrefix("cannot connect to 127.0.0.1:\(blackhole.port)") == true
        }
        #expect(await a.waitFor(failure))
        let sent = a.lines.firstIndex { $0["text"] as? String == "바로 보내요" }
        let failed = a.lines.firstIndex(where: failure)
        #expect(sent != nil && failed != nil && sent! < failed!, "the message went out while the dial still hung")
    }

    /// A second REPL on a data directory in use attaches to the node running there; a second node is refused and
    /// told which process holds the folder, also when the first one cannot be attached to.
    @Test func aSecondREPLAttachesAndASecondNodeIsRefusedNamingTheFirst() async throws {
        let directory = NSTemporaryDirectory() + "dongne-lock-" + UUID().uuidString
        let a = try NodeProcess(name: "민지", extra: [], directory: directory)
        defer { a.stop() }
        _ = try await a.listeningPort()
        let attached = try await REPLProcess.run(["--data", directory, "--port", "0", "--no-dnssd", "--name", "준호"], input: "")
        #expect(attached.status == 0, "\(attached.errors)")
        #expect(attached.output.hasPrefix("* dongne: you are 민지 ("), "the running node's identity: \(attached.output)")
        let node = try await REPLProcess.run(["node", "--data", directory, "--port", "0", "--no-dnssd"], input: "")
        #expect(node.status == 1)
        #expect(node.errors.contains("\(directory) is in use by process \(a.pid) (dongne)"), "\(node.errors)")
        let otherSocket = try await REPLProcess.run(
            ["--data", directory, "--socket", directory + "/elsewhere.sock", "--port", "0", "--no-dnssd"], input: "")
        #expect(otherSocket.status == 1)
        #expect(otherSocket.errors.contains("\(directory) is in use by process \(a.pid) (dongne)"), "\(otherSocket.errors)")
        #expect(otherSocket.output.isEmpty, "it never started: \(otherSocket.output)")
    }

    @Test func theJSONFormSaysWhenASentMessageIsStoredByAPeer() async throws {
        let (a, b) = try await Self.connectedPair()
        defer { [a, b].forEach { $0.stop() } }
        b.type("확인해 주세요")
        #expect(await b.waitFor { $0["text"] as? String == "확인해 주세요" && $0["pending"] as? Bool == true })
        #expect(await b.waitFor { $0["event"] as? String == "acknowledged" && $0["pending"] as? Bool == false })
        a.type("저도 있어요")
        // Acknowledged: b stored it (it shows before its commit), so b's store knows 민지 posts here.
        #expect(await a.waitFor { $0["event"] as? String == "acknowledged" }, "민지: \(a.events)\n준호: \(b.events)")
        b.type("/names")
        #expect(await b.waitFor { $0["event"] as? String == "name" && $0["name"] as? String == "민지" && $0["connected"] as? Bool == true })
        let sent = b.lines.first { $0["text"] as? String == "확인해 주세요" }
        let acknowledged = b.lines.first { $0["event"] as? String == "acknowledged" }
        #expect(sent?["id"] as? String == acknowledged?["id"] as? String)
        #expect(sent?["ref"] as? String == acknowledged?["ref"] as? String)
    }

    @Test func anotherChannelsActivityIsCountedAndTheMarkerShowsWhatIsNew() async throws {
        let (a, b) = try await Self.connectedPair()
        defer { [a, b].forEach { $0.stop() } }
        a.type("/join 경기도")
        b.type("/join 경기도")
        a.type("먼저 온 말")
        #expect(await b.waitFor { $0["text"] as? String == "먼저 온 말" })
        b.type("/join 서울특별시")
        #expect(await b.waitFor { $0["event"] as? String == "joined" && $0["channel"] as? String == "서울특별시" && b.lines.filter { $0["event"] as? String == "joined" }.count >= 3 })
        a.type("준호 어디야?")
        #expect(await b.waitFor { $0["event"] as? String == "activity" && $0["channel"] as? String == "경기도" })
        #expect(await b.waitFor { $0["event"] as? String == "mention" && $0["channel"] as? String == "경기도" })
        #expect(!b.lines.contains { $0["text"] as? String == "준호 어디야?" }, "not printed in another channel")
        b.type("/channels")
        #expect(await b.waitFor { $0["event"] as? String == "channel" && $0["channel"] as? String == "경기도" && $0["unread"] as? Int == 1 })
        let before = b.lines.count
        b.type("/join 경기도")
        #expect(await b.waitFor { $0["text"] as? String == "준호 어디야?" })
        let shown = b.lines.dropFirst(before).compactMap { $0["text"] as? String ?? ($0["event"] as? String == "marker" ? "--" : nil) }
        #expect(shown == ["먼저 온 말", "--", "준호 어디야?"])
    }

    @Test func joiningAChannelWhileConnectedShowsItsLastPageInOrderAndNothingHidden() async throws {
        // A holds 경기도: 30 messages by four people, two hidden by three reports each, one retracted.
        let directory = NSTemporaryDirectory() + "dongne-hidden-" + UUID().uuidString
        let hidden = try await Self.seedChannelWithHiddenMessages(in: directory)
        let a = try NodeProcess(name: "민지", extra: [], directory: directory)
        defer { a.stop() }
        a.type("/join 경기도")
        #expect(await a.waitFor { $0["text"] as? String == "글 29" })
        // A late joiner: the reporters' posts reach it now, so with the default day of standing their reports
        // would count only tomorrow (PROTOCOL.md §1.11). This test is about the page it shows once they count.
        // The seeded authors' keys have no stamps: B asks for none (§1.13 is AdmissionTests').
        let b = try NodeProcess(
            name: "준호",
            extra: ["--peer", "127.0.0.1:\(try await a.listeningPort())", "--reporter-standing", "0", "--stamp-strength", "0"])
        defer { b.stop() }
        #expect(await b.waitFor { $0["event"] as? String == "peer-joined" })
        let mark = b.lines.count
        b.type("/join 경기도")
        #expect(await b.waitFor { $0["text"] as? String == "글 29" })
        let shown = b.lines.dropFirst(mark).compactMap { $0["text"] as? String }
        let active = (0..<30).map { "글 \($0)" }.filter { !hidden.contains($0) }
        #expect(shown == Array(active.suffix(ChannelFeed.pageSize)), "the last page, in order, once")
        b.type("/history 30")
        b.type("/whoami")
        #expect(await b.waitFor { $0["event"] as? String == "whoami" })
        let everything = b.lines.compactMap { $0["text"] as? String }
        #expect(Set(everything).isDisjoint(with: hidden), "never shown: \(Set(everything).intersection(hidden))")
    }

    /// 경기도 in a new data directory: 30 messages ("글 0" …) by four people, 글 7 and 글 21 reported by three
    /// others, 글 12 retracted by its author. The texts of the hidden ones.
    static func seedChannelWithHiddenMessages(in directory: String) async throws -> Set<String> {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try Store(path: directory + "/dongne.sqlite")
        defer { store.close() }
        let channel = try ChannelName(normalizing: "경기도").id
        let people = [Others.bob, Others.carol, Others.dave, Others.erin]
        let start: UInt64 = 1_796_142_840_000
        var ids: [DocumentID] = []
        for index in 0..<30 {
            let body = DocumentBody.message(Message(channel: channel, senderName: "사람", content: .text("글 \(index)")))
            let document = try Document.sign(body, created: start + UInt64(index) * 1_000, by: people[index % 4])
            _ = try await store.insert(document)
            ids.append(document.id)
        }
        for target in [7, 21] {
            for reporter in people where reporter.publicKey != people[target % 4].publicKey {
                let body = DocumentBody.report(Report(channel: channel, message: ids[target], reason: nil))
                _ = try await store.insert(try Document.sign(body, created: start + 40_000, by: reporter))
            }
        }
        let retract = DocumentBody.retract(Retract(channel: channel, message: ids[12]))
        _ = try await store.insert(try Document.sign(retract, created: start + 41_000, by: people[0]))
        return ["글 7", "글 21", "글 12"]
    }

    @Test func aNameChangeIsAnnouncedToOthers() async throws {
        let (a, b) = try await Self.connectedPair()
        defer { [a, b].forEach { $0.stop() } }
        a.type("전에는 민지")
        #expect(await b.waitFor { $0["text"] as? String == "전에는 민지" })
        a.type("/nick 민지2")
        a.type("이제는 민지2")
        #expect(await b.waitFor { $0["event"] as? String == "nick" && $0["old"] as? String == "민지" && $0["name"] as? String == "민지2" })
    }
}

/// A listening socket whose accept queue is full, so that a connection to it neither succeeds nor fails for a
/// while: the kernel drops the SYNs. Loopback only.
final class Blackhole: Sendable {
    let port: Int
    private let descriptors: [Int32]

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else { throw CancellationError() }
        port = Int(UInt16(bigEndian: address.sin_port))
        var descriptors = [listener]
        for _ in 0..<3 {  // fill the queue: these are never accepted
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
            }
            descriptors.append(client)
        }
        self.descriptors = descriptors
        // Waits until the first one is in the queue (its handshake completed): from then on SYNs are dropped.
        var first = pollfd(fd: descriptors[1], events: Int16(POLLOUT), revents: 0)
        guard poll(&first, 1, 5_000) == 1 else { throw CancellationError() }
    }

    func close() { descriptors.forEach { _ = Glibc.close($0) } }
}

/// `--listen`: a node can accept peers on one address only.
@Suite struct ListenAddressTests {
    @Test func aNodeListensOnTheAddressItIsGivenAndPeersReachIt() async throws {
        let a = try NodeProcess(name: "민지", extra: ["--listen", "127.0.0.1"])
        defer { a.stop() }
        #expect(await a.waitFor { ($0["address"] as? String)?.hasPrefix("127.0.0.1:") == true && $0["event"] as? String == "listening" })
        let b = try NodeProcess(name: "준호", extra: ["--peer", "127.0.0.1:\(try await a.listeningPort())"])
        defer { b.stop() }
        #expect(await b.waitFor { $0["event"] as? String == "peer-joined" })
    }

    @Test func aLocationThatIsNotOneIsRefusedWithWhatItTakes() async throws {
        let outOfRange = try await REPLProcess.run(["--location", "97,126"], input: "")
        #expect(outOfRange.status == 2)
        #expect(outOfRange.errors.contains("--location: latitude must be between -90 and 90, not 97.0"), "\(outOfRange.errors)")
        let words = try await REPLProcess.run(["--location", "서울"], input: "")
        #expect(words.status == 2)
        #expect(words.errors.contains("--location: \"서울\" is not a position: give LATITUDE,LONGITUDE in decimal degrees"), "\(words.errors)")
        let gpsd = try await REPLProcess.run(["--gpsd", "localhost"], input: "")
        #expect(gpsd.status == 2 && gpsd.errors.contains("--gpsd takes HOST:PORT, e.g. 127.0.0.1:2947"), "\(gpsd.errors)")
    }

    @Test func anAddressThatIsNotIPv4IsRefusedWithWhatItTakes() async throws {
        let result = try await REPLProcess.run(["--listen", "nonsense"], input: "")
        #expect(result.status == 2)
        #expect(result.errors.contains("--listen takes an IPv4 address, e.g. 127.0.0.1"))
    }
}
