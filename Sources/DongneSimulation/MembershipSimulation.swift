public import DongneCore
import Foundation

/// Many nodes keeping HyParView's partial views (``PartialView``, exactly as it ships) over a simulated
/// network, while nodes join, fail and leave: whether the overlay of neighbours stays one connected whole, and
/// what each node holds for it.
///
/// A message takes the link's delay plus jitter, and arrives after what its sender sent the same node before
/// (``InOrderArrivals``). A node that left answers nothing: a message to it comes back as unreachable after a
/// connection attempt's round trip, and each of its neighbours hears its session end a link delay after it left. Nodes
/// join one after another through a random node already in; during churn, nodes leave at random moments and as many new
/// ones join. Everything random is seeded.
public struct MembershipSimulation {
    /// How the network and the churn behave.
    public struct Scenario: Sendable {
        /// Nodes at the start.
        public var nodes = 1_000
        /// Milliseconds between two nodes' joins at the start.
        public var joinSpacing: UInt64 = 20
        /// Milliseconds every message takes on a link.
        public var linkDelay: UInt64 = 100
        /// Up to this much is added to each message's delay, at random.
        public var jitter: UInt64 = 10
        /// Milliseconds from the last first join to the start of churn.
        public var settle: UInt64 = 60_000
        /// Share of the live nodes that leave each minute during churn, as many new ones joining.
        public var churnPerMinute = 0.1
        /// Minutes of churn.
        public var churnMinutes = 5
        /// Nodes that share one host (one IP address, each on its own port): the views' caps per host then
        /// matter.
        public var nodesPerHost = 1
        /// Every node's settings.
        public var settings = PartialView.Settings()
        /// The seed of every random choice.
        public var seed: UInt64 = 1

        /// A thousand nodes, 100 ms links, 10% churn a minute for five minutes.
        public init() {}
    }

    /// What a run measured.
    public struct Report: Sendable, CustomStringConvertible {
        /// Nodes live at the end.
        public let liveNodes: Int
        /// Nodes that left and joined during churn.
        public let left: Int, joined: Int
        /// Checks of the overlay made (every 10 s from the start of churn to its end and 30 s beyond).
        public let checks: Int
        /// Checks at which every live node could reach every other over neighbour links.
        public let connectedChecks: Int
        /// The smallest share of live nodes in the largest connected part, over all checks.
        public let worstLargestComponent: Double
        /// Neighbours per live node at the end: mean and most.
        public let active: (mean: Double, maximum: Int)
        /// Spares per live node at the end: mean and most.
        public let passive: (mean: Double, maximum: Int)
        /// Addresses a node's membership state holds at the end (neighbours, spares, requests): mean and most.
        public let state: (mean: Double, maximum: Int)
        /// Neighbour links held by one end only, at the end.
        public let oneSidedLinks: Int
        /// Membership messages per live node per second during churn.
        public let messagesPerNodePerSecond: Double
        /// The neighbour links among live nodes at the end, each once, the live nodes numbered 0..<liveNodes in the
        /// order they first joined (smaller number first).
        public let links: [[Int]]

        /// The figures in one line.
        public var description: String {
            let format = { (value: Double) in String(format: "%.1f", value) }
            return "\(liveNodes) live (\(left) left, \(joined) joined), connected at \(connectedChecks)/\(checks) checks "
                + "(largest part ≥ \(format(worstLargestComponent * 100))%), neighbours \(format(active.mean)) "
                + "(max \(active.maximum)), spares \(format(passive.mean)) (max \(passive.maximum)), state "
                + "\(format(state.mean)) addresses (max \(state.maximum)), one-sided links \(oneSidedLinks), "
                + "\(format(messagesPerNodePerSecond)) membership messages/node/s"
        }
    }

    private enum Item {
        case start(node: Int, contact: Int?)
        case event(PartialView.Event, node: Int)
        case wake(node: Int)
        case leave(node: Int)
        case check
    }

    private let scenario: Scenario
    private var random: SplitMix64
    private var views: [PartialView] = []
    private var live: Set<Int> = []
    private var wakeAt: [UInt64?] = []
    private var queue = EventQueue<Item>()
    private var messages = 0
    private var arrivals = InOrderArrivals()
    private var (left, joined) = (0, 0)
    private var (checks, connectedChecks) = (0, 0)
    private var worstLargestComponent = 1.0
    private let churnStart: UInt64
    private let churnEnd: UInt64

    /// A simulation of `scenario`.
    public init(_ scenario: Scenario) {
        self.scenario = scenario
        random = SplitMix64(seed: scenario.seed)
        churnStart = UInt64(scenario.nodes) * scenario.joinSpacing + scenario.settle
        churnEnd = churnStart + UInt64(scenario.churnMinutes) * 60_000
    }

    /// Runs the joins, the churn and 30 s beyond; what it measured.
    public mutating func run() -> Report {
        for node in 0..<scenario.nodes {
            let time = UInt64(node) * scenario.joinSpacing
            queue.push(.start(node: addNode(), contact: node == 0 ? nil : -1), at: time)
        }
        scheduleChurn()
        var check = churnStart
        while check <= churnEnd + 30_000 {
            queue.push(.check, at: check)
            check += 10_000
        }
        while let (time, item) = queue.pop(), time <= churnEnd + 30_000 { step(item, at: time) }
        return report()
    }

    /// Each minute of churn: a share of the nodes then live leave at random moments, as many join.
    private mutating func scheduleChurn() {
        let perMinute = Int((Double(scenario.nodes) * scenario.churnPerMinute).rounded())
        for minute in 0..<UInt64(scenario.churnMinutes) {
            for _ in 0..<perMinute {
                let start = churnStart + minute * 60_000
                queue.push(.leave(node: -1), at: start + UInt64.random(in: 0..<60_000, using: &random))
                queue.push(.start(node: -1, contact: -1), at: start + UInt64.random(in: 0..<60_000, using: &random))
            }
        }
    }

    private mutating func addNode() -> Int {
        let node = views.count
        views.append(
            PartialView(
                ownAddress: self.address(of: node), random: SplitMix64(seed: scenario.seed &* 7_919 &+ UInt64(node)),
                settings: scenario.settings))
        wakeAt.append(nil)
        return node
    }

    /// Node `node`'s address: ``Scenario/nodesPerHost`` nodes share a host, on ports from 7,000 up.
    private func address(of node: Int) -> PeerAddress {
        let (host, slot) = node.quotientAndRemainder(dividingBy: scenario.nodesPerHost)
        return PeerAddress(
            host: "10.\(host / 62_500).\(host / 250 % 250).\(host % 250 + 1)", port: UInt16(7_000 + slot))
    }

    private func node(at address: PeerAddress) -> Int? {
        let parts = address.host.split(separator: ".").compactMap { Int($0) }
        let slot = Int(address.port) - 7_000
        guard parts.count == 4, parts[3] >= 1, (0..<scenario.nodesPerHost).contains(slot) else { return nil }
        return (parts[1] * 62_500 + parts[2] * 250 + parts[3] - 1) * scenario.nodesPerHost + slot
    }

    private mutating func step(_ item: Item, at time: UInt64) {
        switch item {
        case .start(let node, let contact):
            // -1: a node made now (during churn), or a contact picked now among the live nodes.
            let node = node >= 0 ? node : addNode()
            if node >= scenario.nodes { joined += 1 }
            let contact = contact == nil ? nil : live.sorted().randomElement(using: &random)
            live.insert(node)
            handle(.start(contact: contact.map { self.address(of: $0) }), at: node, time: time)
        case .event(let event, let node):
            handle(event, at: node, time: time)
        case .wake(let node):
            guard let due = wakeAt[node], due <= time else { return }
            wakeAt[node] = nil
            handle(.timer, at: node, time: time)
        case .leave:
            guard let node = live.sorted().randomElement(using: &random) else { return }
            leave(node, at: time)
        case .check:
            checkOverlay()
        }
    }

    /// A node goes away without a word: its neighbours hear their sessions with it end.
    private mutating func leave(_ node: Int, at time: UInt64) {
        live.remove(node)
        left += 1
        let address = self.address(of: node)
        for other in live.sorted() where views[other].active.contains(address) {
            queue.push(.event(.lost(address), node: other), at: time + scenario.linkDelay)
        }
    }

    private mutating func handle(_ event: PartialView.Event, at node: Int, time: UInt64) {
        guard live.contains(node) else { return }
        for directive in views[node].handle(event, now: time) {
            switch directive {
            case .send(let message, let address):
                send(message, from: node, to: address, at: time)
            case .keep(let address):
                // A session with a node that left cannot be made.
                if let peer = self.node(at: address), !live.contains(peer) {
                    queue.push(.event(.unreachable(address), node: node), at: time + 2 * scenario.linkDelay)
                }
            case .drop:
                continue
            case .wake(let at):
                guard at != UInt64.max, wakeAt[node].map({ at < $0 || $0 <= time }) ?? true else { continue }
                wakeAt[node] = at
                queue.push(.wake(node: node), at: max(at, time))
            }
        }
    }

    private mutating func send(_ message: MembershipMessage, from node: Int, to address: PeerAddress, at time: UInt64) {
        if time >= churnStart, time <= churnEnd { messages += 1 }
        guard let peer = self.node(at: address), live.contains(peer) else {
            queue.push(.event(.unreachable(address), node: node), at: time + 2 * scenario.linkDelay)
            return
        }
        let delay = scenario.linkDelay + UInt64.random(in: 0...scenario.jitter, using: &random)
        let arrival = arrivals.arrival(from: node, to: peer, at: time + delay)
        queue.push(.event(.received(message, from: self.address(of: node)), node: peer), at: arrival)
    }

    /// Neighbour links among live nodes, as an undirected graph: is it one whole?
    private mutating func checkOverlay() {
        checks += 1
        let neighbours = liveNeighbours()
        var unseen = live
        var largest = 0
        while let first = unseen.min() {
            var part = [first]
            unseen.remove(first)
            var index = 0
            while index < part.count {
                for next in neighbours[part[index], default: []] where unseen.remove(next) != nil { part.append(next) }
                index += 1
            }
            largest = max(largest, part.count)
        }
        if largest == live.count { connectedChecks += 1 }
        worstLargestComponent = min(worstLargestComponent, Double(largest) / Double(max(1, live.count)))
    }

    /// Each live node's live neighbours, links counted from either end.
    private func liveNeighbours() -> [Int: Set<Int>] {
        var neighbours: [Int: Set<Int>] = [:]
        for node in live {
            for address in views[node].active {
                guard let other = self.node(at: address), live.contains(other) else { continue }
                neighbours[node, default: []].insert(other)
                neighbours[other, default: []].insert(node)
            }
        }
        return neighbours
    }

    private func report() -> Report {
        let nodes = live.sorted()
        let statistics = { (values: [Int]) in
            (Double(values.reduce(0, +)) / Double(max(1, values.count)), values.max() ?? 0)
        }
        let dense = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($1, $0) })
        var oneSided = 0
        var links: Set<[Int]> = []
        for node in nodes {
            for address in views[node].active {
                guard let other = self.node(at: address), live.contains(other) else { continue }
                if !views[other].active.contains(self.address(of: node)) { oneSided += 1 }
                links.insert([dense[node]!, dense[other]!].sorted())
            }
        }
        let seconds = Double(churnEnd - churnStart) / 1_000
        return Report(
            liveNodes: nodes.count, left: left, joined: joined, checks: checks, connectedChecks: connectedChecks,
            worstLargestComponent: worstLargestComponent, active: statistics(nodes.map { views[$0].active.count }),
            passive: statistics(nodes.map { views[$0].passive.count }),
            state: statistics(nodes.map { views[$0].stateSize }), oneSidedLinks: oneSided,
            messagesPerNodePerSecond: Double(messages) / Double(max(1, nodes.count)) / max(1, seconds),
            links: links.sorted { $0.lexicographicallyPrecedes($1) })
    }
}
