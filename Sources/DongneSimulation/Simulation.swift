public import DongneCore
import Foundation

/// Many gossip instances on a simulated network: delay, jitter (so reordering), loss, duplication and
/// partitions, all seeded. The shell of each node is simulated too: it checks every document's signature
/// before admitting it, as the real node does.
public struct Simulation {
    /// How the network and the workload behave.
    public struct Scenario: Sendable {
        /// Nodes in the network.
        public var nodes = 25
        /// Links per node added at random on top of a ring (so the graph is connected).
        public var extraLinksPerNode = 1
        /// Milliseconds every message takes on a link.
        public var linkDelay: UInt64 = 100
        /// Up to this much is added to each message's delay, at random: messages overtake each other.
        public var jitter: UInt64 = 10
        /// Probability that a message is lost.
        public var loss = 0.0
        /// Probability that a message arrives twice.
        public var duplication = 0.0
        /// New documents per second, each at a random node.
        public var messagesPerSecond = 100
        /// Milliseconds during which documents are written.
        public var writingDuration: UInt64 = 20_000
        /// Links between the two groups (nodes below `partitionSplit` and the rest) drop everything in here.
        public var partition: Range<UInt64>? = nil
        /// Nodes below this number form one side of the partition.
        public var partitionSplit = 12
        /// The gossip settings of every node.
        public var settings = GossipInstance.Settings()
        /// The seed of every random choice: the same seed, the same run.
        public var seed: UInt64 = 1

        /// The Gossip Glomers broadcast workload: 25 nodes, 100 ms links, 100 messages a second for 20 s.
        public init() {}
    }

    /// What a run measured.
    public struct Report: Sendable, CustomStringConvertible {
        /// Documents written.
        public let published: Int
        /// (document, node) pairs that never arrived.
        public let lost: Int
        /// Messages sent between nodes, acknowledgements included.
        public let messages: Int
        /// Messages per document written.
        public let messagesPerOperation: Double
        /// Median milliseconds from writing a document to its arrival at a node.
        public let medianLatency: UInt64
        /// The longest of those.
        public let maximumLatency: UInt64
        /// When the last document reached the last node, after the partition healed (nil without partition).
        public let catchUpAfterHeal: UInt64?

        /// The figures in one line.
        public var description: String {
            var text =
                "published \(published), lost \(lost), messages/op \(String(format: "%.2f", messagesPerOperation)), "
                + "latency median \(medianLatency) ms, max \(maximumLatency) ms"
            if let catchUpAfterHeal { text += ", everything everywhere \(catchUpAfterHeal) ms after the heal" }
            return text
        }
    }

    private enum Item {
        case deliver(GossipMessage, from: PeerID, to: Int)
        case wake(node: Int)
        case publish(node: Int)
    }

    private let scenario: Scenario
    private var random: SplitMix64
    private var nodes: [GossipInstance]
    private var links: Set<[Int]> = []
    private var queue = EventQueue<Item>()
    private let keys: [SigningKey]
    private let channel = try! ChannelName(normalizing: "서울특별시").id
    private var publishedAt: [DocumentID: UInt64] = [:]
    private var arrivals: [DocumentID: [Int: UInt64]] = [:]
    private var messagesSent = 0
    private var counter = 0

    /// A simulation of `scenario`.
    public init(_ scenario: Scenario) {
        self.scenario = scenario
        random = SplitMix64(seed: scenario.seed)
        nodes = (0..<scenario.nodes).map { _ in GossipInstance(settings: scenario.settings) }
        keys = (0..<scenario.nodes).map { SigningKey(seed: [UInt8](repeating: UInt8($0), count: 31) + [0x5e])! }
    }

    /// Runs the workload, then lets the network settle; what it measured.
    public mutating func run() -> Report {
        connect()
        let total = scenario.messagesPerSecond * Int(scenario.writingDuration) / 1_000
        for _ in 0..<total {
            let time = UInt64.random(in: 0..<scenario.writingDuration, using: &random)
            queue.push(.publish(node: Int.random(in: 0..<scenario.nodes, using: &random)), at: time)
        }
        let end = scenario.writingDuration + (scenario.partition?.upperBound ?? 0) + 30_000
        while let (time, item) = queue.pop(), time <= end { step(item, at: time) }
        return report()
    }

    /// A ring, plus random extra links.
    private mutating func connect() {
        let count = scenario.nodes
        for node in 0..<count { links.insert([node, (node + 1) % count].sorted()) }
        for node in 0..<count {
            for _ in 0..<scenario.extraLinksPerNode {
                let other = Int.random(in: 0..<count, using: &random)
                if other != node { links.insert([node, other].sorted()) }
            }
        }
        for link in links.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            // A node's tag is its number, as every node's tag is the start of its key.
            _ = nodes[link[0]].handle(
                .connected(PeerID(UInt64(link[1])), channels: [channel], tag: PeerTag(UInt64(link[1]))))
            _ = nodes[link[1]].handle(
                .connected(PeerID(UInt64(link[0])), channels: [channel], tag: PeerTag(UInt64(link[0]))))
        }
    }

    private mutating func step(_ item: Item, at time: UInt64) {
        switch item {
        case .publish(let node):
            counter += 1
            let body = DocumentBody.message(
                Message(channel: channel, senderName: "n\(node)", content: .text("m\(counter)")))
            let document = try! Document.sign(body, created: 1_764_400_000_000 + time, by: keys[node])
            publishedAt[document.id] = time
            arrivals[document.id, default: [:]][node] = time
            apply(nodes[node].handle(.tick(now: time)), at: node, time: time)
            apply(
                nodes[node].handle(.published(id: document.id, channel: channel, bytes: document.bytes)), at: node,
                time: time)
        case .wake(let node):
            apply(nodes[node].handle(.tick(now: time)), at: node, time: time)
        case .deliver(let message, let from, let node):
            apply(nodes[node].handle(.tick(now: time)), at: node, time: time)
            apply(nodes[node].handle(.received(message, from: from)), at: node, time: time)
        }
    }

    /// Carries out a node's directives: sends go on the wire, admissions are checked at once, wakes are queued.
    private mutating func apply(_ directives: [GossipInstance.Directive], at node: Int, time: UInt64) {
        for directive in directives {
            switch directive {
            case .send(let message, let peer), .sendDatagram(let message, let peer):
                // The simulated links lose, delay, duplicate and reorder every message alike.
                transmit(message, from: node, to: Int(peer.value), at: time)
            case .admit(let document, _):
                let id = document.id
                let valid = (try? document.verified()) != nil
                if valid, arrivals[id]?[node] == nil { arrivals[id, default: [:]][node] = time }
                apply(nodes[node].handle(valid ? .admitted(id) : .refused(id)), at: node, time: time)
            case .wake(let at):
                queue.push(.wake(node: node), at: at)
            case .delivered, .misbehaved:
                break
            }
        }
    }

    private mutating func transmit(_ message: GossipMessage, from node: Int, to peer: Int, at time: UInt64) {
        messagesSent += 1
        if let partition = scenario.partition, partition.contains(time),
            (node < scenario.partitionSplit) != (peer < scenario.partitionSplit)
        {
            return
        }
        if Double.random(in: 0..<1, using: &random) < scenario.loss { return }
        let copies = Double.random(in: 0..<1, using: &random) < scenario.duplication ? 2 : 1
        for _ in 0..<copies {
            let delay = scenario.linkDelay + UInt64.random(in: 0...scenario.jitter, using: &random)
            queue.push(.deliver(message, from: PeerID(UInt64(node)), to: peer), at: time + delay)
        }
    }

    private func report() -> Report {
        var latencies: [UInt64] = []
        var lost = 0
        var lastArrival: UInt64 = 0
        for (id, published) in publishedAt {
            let seen = arrivals[id] ?? [:]
            lost += scenario.nodes - seen.count
            for (_, time) in seen {
                latencies.append(time - published)
                lastArrival = max(lastArrival, time)
            }
        }
        latencies.sort()
        let operations = max(1, publishedAt.count)
        return Report(
            published: publishedAt.count, lost: lost, messages: messagesSent,
            messagesPerOperation: Double(messagesSent) / Double(operations),
            medianLatency: latencies.isEmpty ? 0 : latencies[latencies.count / 2], maximumLatency: latencies.last ?? 0,
            catchUpAfterHeal: scenario.partition.map { lastArrival > $0.upperBound ? lastArrival - $0.upperBound : 0 })
    }
}
