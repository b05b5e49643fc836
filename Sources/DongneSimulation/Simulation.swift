public import DongneCore
import Foundation

/// Many nodes on a simulated network, each running the real rules: a ``PeerInstance`` (gossip, reconciliation,
/// sessions, liveness, redials, anti-entropy) exactly as it ships, with a simulated shell around it that
/// checks every document's signature, keeps a store in memory, and carries messages over simulated links.
///
/// Links are TCP sessions: in order, never duplicated; a lost segment is sent again after a retransmission
/// timeout, so loss delays a message and everything behind it rather than losing it. A partition holds
/// everything between the two groups: a session that outlives it delivers what waited, one that does not (its
/// ends close it after the silence limit) loses it, and dials across it time out. Everything random is seeded.
public struct Simulation {
    /// How the network and the workload behave.
    public struct Scenario: Sendable {
        /// Nodes in the network.
        public var nodes = 25
        /// Links per node added at random on top of a ring (so the graph is connected).
        public var extraLinksPerNode = 1
        /// Milliseconds every message takes on a link.
        public var linkDelay: UInt64 = 100
        /// Up to this much is added to each message's delay, at random (a link still delivers in order).
        public var jitter: UInt64 = 10
        /// Probability that a segment is lost (and sent again after ``retransmissionTimeout``, maybe lost again).
        public var loss = 0.0
        /// TCP's retransmission timeout on a LAN.
        public var retransmissionTimeout: UInt64 = 200
        /// New documents per second, each at a random node.
        public var messagesPerSecond = 100
        /// Milliseconds during which documents are written.
        public var writingDuration: UInt64 = 20_000
        /// Links between the two groups (nodes below `partitionSplit` and the rest) carry nothing in here.
        public var partition: Range<UInt64>? = nil
        /// Nodes below this number form one side of the partition.
        public var partitionSplit = 12
        /// The settings of every node.
        public var settings = PeerInstance.Settings()
        /// Bytes per millisecond each node's uplink carries, all its sessions together (nil: no limit). A message
        /// leaves once the ones before it on the node's uplink have, and takes its size over this rate.
        public var uplinkBytesPerMillisecond: Double? = nil
        /// Every node dials every other (instead of a ring with random extra links).
        public var fullMesh = false
        /// These links (pairs of node numbers, the first dials the second) instead of a ring with random extra
        /// links: an overlay another run built, such as ``MembershipSimulation``'s neighbours.
        public var links: [[Int]]? = nil
        /// Each node keeps HyParView's partial views (``PartialView``, exactly as it ships) and holds sessions
        /// with its neighbours only, instead of fixed links: the nodes join one after another during
        /// ``warmUp``, through a random node already in, every ``joinSpacing`` milliseconds. Their membership
        /// messages take the link's delay and are not counted among ``Report/messages``.
        public var partialViews: PartialView.Settings? = nil
        /// With partial views: each node's own ``PeerInstance`` keeps them, as a listening node does (its
        /// membership messages travel over sessions, some opened for them alone), instead of views beside the
        /// nodes that tell them which sessions to hold. Membership messages are counted apart either way.
        public var viewsInNodes = false
        /// Milliseconds between two nodes' joins at the start, with partial views.
        public var joinSpacing: UInt64 = 20
        /// With partial views: the live addresses a node joining during the writing knows, the first its contact
        /// and the others spares, as DNS-SD and the peers it met before give a real node several. With one, a
        /// joiner whose contact leaves before the join reaches it is alone for good, which no protocol can help.
        public var joinerAddresses = 3
        /// With partial views: the share of ``nodes`` that leave (without a word) each minute of writing, as
        /// many new nodes joining. A document counts as lost when a node live at the end lacks it.
        public var churnPerMinute = 0.0
        /// A blob to fetch, if any (``BlobWorkload``).
        public var blob: BlobWorkload? = nil
        /// The seed of every random choice: the same seed, the same run.
        public var seed: UInt64 = 1
        /// Milliseconds for the nodes to dial each other before the workload starts (and the partition's times
        /// count from): the Glomers workload runs on a network that is up.
        public var warmUp: UInt64 = 1_000

        /// The Gossip Glomers broadcast workload: 25 nodes, 100 ms links, 100 messages a second for 20 s.
        public init() {}
    }

    /// One blob, held by some nodes when the workload starts and fetched by another.
    public struct BlobWorkload: Sendable {
        /// The blob's size in bytes.
        public var size: Int
        /// Nodes holding all of it from the start.
        public var holders: [Int]
        /// The node that fetches it, from the start of the workload.
        public var fetcher: Int
        /// Holders that serve every chunk with one byte changed.
        public var corrupting: Set<Int> = []
        /// A holder that goes away (its sessions close) this long after the workload starts.
        public var leaving: (node: Int, after: UInt64)? = nil

        /// A blob of `size` bytes held by `holders` and fetched by `fetcher`.
        public init(size: Int, holders: [Int], fetcher: Int) {
            self.size = size
            self.holders = holders
            self.fetcher = fetcher
        }
    }

    /// What a run measured.
    public struct Report: Sendable, CustomStringConvertible {
        /// Documents written.
        public let published: Int
        /// (document, node) pairs that never arrived.
        public let lost: Int
        /// Messages sent between nodes once the workload started, but keepalives (empty acknowledgements sent
        /// only to show liveness).
        public let messages: Int
        /// Keepalives sent.
        public let keepalives: Int
        /// Messages per document written.
        public let messagesPerOperation: Double
        /// Median milliseconds from writing a document to its arrival at a node.
        public let medianLatency: UInt64
        /// The longest of those.
        public let maximumLatency: UInt64
        /// When the last document reached the last node, after the partition healed (nil without partition).
        public let catchUpAfterHeal: UInt64?
        /// Milliseconds from the start of the blob workload to the fetcher holding every chunk (nil: never).
        public let blobFetched: UInt64?
        /// Chunks each node sent the fetcher.
        public let chunksSent: [Int: Int]
        /// Whether the fetcher's copy of the blob is the blob, chunk for chunk.
        public let blobIntact: Bool
        /// The messages counted in ``messages``, by type as PROTOCOL.md §2.4 names them (`batch`, …).
        public let messagesByType: [String: Int]
        /// Copies of documents the batches carried, per document written (a node needs one; more are duplicates).
        public let copiesPerDocument: Double
        /// Sessions each node holds at the end: the mean and the most (a node's state grows with them).
        public let sessionsPerNode: (mean: Double, maximum: Int)
        /// With partial views: nodes that left and joined while documents were written, documents that left
        /// with their writer before reaching anyone, and the membership messages sent per document written (nil
        /// without partial views).
        public let churn: (left: Int, joined: Int, goneWithWriter: Int, membershipMessagesPerOperation: Double)?
        /// With partial views: the addresses each live node's membership holds at the end, the mean and the most
        /// (``PeerInstance/membershipStateSize`` when the nodes keep their views, else the views' own).
        public let membershipStatePerNode: (mean: Double, maximum: Int)?

        /// The figures in one line.
        public var description: String {
            var text =
                "published \(published), lost \(lost), messages/op \(String(format: "%.2f", messagesPerOperation)), "
                + "latency median \(medianLatency) ms, max \(maximumLatency) ms, keepalives \(keepalives)"
            if let catchUpAfterHeal { text += ", everything everywhere \(catchUpAfterHeal) ms after the heal" }
            if let churn {
                text += ", \(churn.left) left and \(churn.joined) joined (\(churn.goneWithWriter) documents left with "
                    + "their writer), membership messages/op "
                    + String(format: "%.2f", churn.membershipMessagesPerOperation)
            }
            return text
        }

        /// The messages by type, most first, and the document copies they carried, in one line.
        public var composition: String {
            let types = messagesByType.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            let copies = String(format: "%.1f", copiesPerDocument)
            return types.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + "; \(copies) copies per document"
        }
    }

    private enum Item {
        case event(PeerInstance.Event, node: Int)
        /// A message over a session, delivered only if that session still exists at both ends.
        case message([UInt8], link: LinkEnd)
        case closed(LinkEnd)
        case wake(node: Int)
        case publish(node: Int)
        case dialled(from: Int, to: Int)
        case startBlob
        case leave(node: Int)
        /// With partial views: a node joins (-1: a new one, during churn; -2: a random live one leaves).
        case join(node: Int)
        case view(PartialView.Event, node: Int)
        case viewWake(node: Int)
    }

    /// One end of a session: the node, its number for the session, and the other end.
    private struct LinkEnd: Hashable {
        let node: Int
        let id: PeerID
    }

    /// A node's in-memory store.
    private struct Store {
        var documents: [DocumentID: (created: UInt64, bytes: [UInt8])] = [:]
        var manifests: [BlobHash: BlobManifest] = [:]
        var chunks: [BlobHash: [Int: [UInt8]]] = [:]
        /// The node's own writes no peer has acknowledged yet.
        var pending: Set<DocumentID> = []
    }

    private let scenario: Scenario
    private var random: SplitMix64
    private var nodes: [PeerInstance]
    private var stores: [Store]
    private var wakeAt: [UInt64?]
    private var nextPeer: [UInt64]
    /// Each session end's other end.
    private var sessions: [LinkEnd: LinkEnd] = [:]
    /// When the last message on each direction of a session arrives (they arrive in order).
    private var lastArrival: [LinkEnd: UInt64] = [:]
    private var queue = EventQueue<Item>()
    private let keys: [SigningKey]
    private let channel = try! ChannelName(normalizing: "서울특별시").id
    private var publishedAt: [DocumentID: UInt64] = [:]
    private var arrivals: [DocumentID: [Int: UInt64]] = [:]
    private var messagesSent = 0
    private var messagesByType: [String: Int] = [:]
    private var copiesSent = 0
    private var keepalivesSent = 0
    private var counter = 0
    private var uplinkFreeAt: [UInt64]
    private var blob: (manifest: BlobManifest, chunks: [[UInt8]])?
    private var blobFetched: UInt64?
    private var chunksSent: [Int: Int] = [:]
    private var gone: Set<Int> = []
    /// With partial views: each node's views, when its views want waking, the nodes not joined yet, and the
    /// membership messages sent.
    private var views: [PartialView] = []
    private var viewWakeAt: [UInt64?] = []
    private var notJoined: [Int] = []
    private var membershipMessages = 0
    private var membershipArrivals = InOrderArrivals()
    private var (left, joined) = (0, 0)
    private var joinedAt: [Int: UInt64] = [:]

    /// A simulation of `scenario`.
    public init(_ scenario: Scenario) {
        self.scenario = scenario
        random = SplitMix64(seed: scenario.seed)
        let joiners = scenario.partialViews == nil ? 0 : Self.churn(scenario) * Int(scenario.writingDuration / 60_000)
        let keys = (0..<scenario.nodes + joiners).map { node in
            let (low, high) = (UInt8(truncatingIfNeeded: node), UInt8(truncatingIfNeeded: node >> 8))
            return SigningKey(seed: [UInt8](repeating: low, count: 31) + [0x5e ^ high])!
        }
        self.keys = keys
        var settings = scenario.settings
        settings.partialView = scenario.viewsInNodes ? scenario.partialViews : nil
        nodes = keys.indices.map { node in
            PeerInstance(
                identity: keys[node].publicKey, now: 0,
                random: SplitMix64(seed: scenario.seed &* 1_000 &+ UInt64(node)), settings: settings)
        }
        stores = Array(repeating: Store(), count: keys.count)
        wakeAt = Array(repeating: nil, count: keys.count)
        nextPeer = Array(repeating: 1, count: keys.count)
        uplinkFreeAt = Array(repeating: 0, count: keys.count)
        if let settings = scenario.partialViews {
            // Views beside the nodes, unless each node keeps its own.
            views = scenario.viewsInNodes ? [] : keys.indices.map { node in
                PartialView(
                    ownAddress: Self.address(of: node), random: SplitMix64(seed: scenario.seed &* 7_919 &+ UInt64(node)),
                    settings: settings)
            }
            viewWakeAt = Array(repeating: nil, count: keys.count)
            notJoined = Array(scenario.nodes..<keys.count)
            gone = Set(keys.indices)  // until each joins
        }
        if let workload = scenario.blob { blob = Self.makeBlob(size: workload.size) }
    }

    /// The nodes that have joined and not left, in order.
    private var liveNodes: [Int] { keys.indices.filter { !gone.contains($0) } }

    /// Nodes that leave each minute of churn (as many join).
    private static func churn(_ scenario: Scenario) -> Int {
        Int((Double(scenario.nodes) * scenario.churnPerMinute).rounded())
    }

    /// A blob of pseudo-random bytes and its manifest.
    private static func makeBlob(size: Int) -> (manifest: BlobManifest, chunks: [[UInt8]]) {
        var generator = SplitMix64(seed: 42)
        let chunks = (0..<BlobChunk.count(forSize: size)).map { index in
            (0..<BlobChunk.range(index, inBlobOf: size).count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        let manifest = try! BlobManifest(
            mediaType: "image/jpeg", size: size, chunks: chunks.map(BlobChunk.name(of:)), width: 1, height: 1,
            thumbnail: [0xff])
        return (manifest, chunks)
    }

    /// The blob workload starts: holders hold the blob, the fetcher asks for it.
    private mutating func startBlobWorkload(at time: UInt64) {
        guard let workload = scenario.blob, let blob else { return }
        for holder in workload.holders {
            stores[holder].manifests[blob.manifest.hash] = blob.manifest
            stores[holder].chunks[blob.manifest.hash] = Dictionary(uniqueKeysWithValues: blob.chunks.enumerated().map { ($0, $1) })
        }
        handle(.fetchBlob(blob.manifest.hash, manifest: nil, held: []), at: workload.fetcher, time: time)
    }

    /// A node goes away: every session of its ends (its peers hear the close), and it handles nothing more.
    private mutating func leave(_ node: Int, at time: UInt64) {
        guard !gone.contains(node) else { return }
        gone.insert(node)
        if !views.isEmpty { viewsLose(node, at: time) }
        for end in sessions.keys.filter({ $0.node == node }).sorted(by: { $0.id < $1.id }) { hangUp(end, at: time) }
    }

    /// A node's answer to a peer's `blob want` or `chunk request`, from its in-memory store.
    private func answer(_ request: GossipMessage, at node: Int) -> [GossipMessage] {
        let hash: BlobHash
        switch request {
        case .blobWant(let blob), .chunkRequest(let blob, _): hash = blob
        case .batch, .acknowledge, .channels, .reconcile, .request, .reconciled, .datagrams, .blobHave, .chunk,
            .listening, .membership:
            return []
        }
        let manifest = stores[node].manifests[hash]
        let chunks = stores[node].chunks[hash] ?? [:]
        let held = manifest.map { HeldChunks(count: $0.chunks.count, indexes: chunks.keys) }
        let corrupting = scenario.blob?.corrupting.contains(node) == true
        return BlobAnswer.answer(request, manifest: manifest, held: held) { index in
            guard var bytes = chunks[index] else { return nil }
            if corrupting { bytes[0] ^= 0xff }
            return bytes
        }
    }

    /// Runs the workload, then lets the network settle; what it measured.
    public mutating func run() -> Report {
        for node in 0..<scenario.nodes { handle(.joinedChanged([channel]), at: node, time: 0) }
        if scenario.partialViews == nil { connect() } else { scheduleJoinsAndChurn() }
        let total = scenario.messagesPerSecond * Int(scenario.writingDuration) / 1_000
        if scenario.blob != nil { queue.push(.startBlob, at: scenario.warmUp) }
        if let leaving = scenario.blob?.leaving { queue.push(.leave(node: leaving.node), at: scenario.warmUp + leaving.after) }
        for _ in 0..<total {
            let time = UInt64.random(in: 0..<scenario.writingDuration, using: &random)
            queue.push(.publish(node: Int.random(in: 0..<scenario.nodes, using: &random)), at: scenario.warmUp + time)
        }
        var end = scenario.warmUp + scenario.writingDuration + (scenario.partition?.upperBound ?? 0) + 30_000
        if scenario.blob != nil { end = max(end, scenario.warmUp + 120_000) }
        while let (time, item) = queue.pop(), time <= end { step(item, at: time) }
        return report()
    }

    /// Each node listens at 10.0.0.N:7000 and dials the nodes of its links with a larger number: a ring, plus
    /// random extra links.
    private mutating func connect() {
        let count = scenario.nodes
        var links: Set<[Int]> = []
        for node in 0..<count { links.insert([node, (node + 1) % count].sorted()) }
        for node in 0..<count {
            for _ in 0..<scenario.extraLinksPerNode {
                let other = Int.random(in: 0..<count, using: &random)
                if other != node { links.insert([node, other].sorted()) }
            }
        }
        if scenario.fullMesh {
            links = Set((0..<count).flatMap { node in (node + 1..<count).map { [node, $0] } })
        }
        if let given = scenario.links { links = Set(given.filter { $0.count == 2 && $0[0] != $0[1] }) }
        for link in links.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            handle(.connect(Self.address(of: link[1])), at: link[0], time: 0)
        }
    }

    private static func address(of node: Int) -> PeerAddress {
        PeerAddress(host: "10.0.\(node / 250).\(node % 250 + 1)", port: 7_000)
    }

    private static func node(at address: PeerAddress) -> Int? {
        let parts = address.host.split(separator: ".").compactMap { Int($0) }
        guard parts.count == 4 else { return nil }
        return parts[2] * 250 + parts[3] - 1
    }

    private func partitioned(_ first: Int, _ second: Int, at time: UInt64) -> Bool {
        guard let partition = scenario.partition, time >= scenario.warmUp, partition.contains(time - scenario.warmUp)
        else { return false }
        return (first < scenario.partitionSplit) != (second < scenario.partitionSplit)
    }

    private mutating func step(_ item: Item, at time: UInt64) {
        switch item {
        case .publish(var node):
            if gone.contains(node) {
                guard let live = liveNodes.randomElement(using: &random) else { return }
                node = live
            }
            counter += 1
            let body = DocumentBody.message(
                Message(channel: channel, senderName: "n\(node)", content: .text("m\(counter)")))
            let document = try! Document.sign(body, created: 1_764_400_000_000 + time, by: keys[node])
            publishedAt[document.id] = time
            arrivals[document.id, default: [:]][node] = time
            stores[node].documents[document.id] = (document.created, document.bytes)
            stores[node].pending.insert(document.id)
            handle(.published(GossipDocument(id: document.id, bytes: document.bytes), channel: channel), at: node, time: time)
        case .event(let event, let node):
            handle(event, at: node, time: time)
        case .message(let bytes, let end):
            guard sessions[end] != nil else { return }  // the session ended meanwhile
            handle(.message(end.id, bytes), at: end.node, time: time)
        case .closed(let end):
            guard sessions.removeValue(forKey: end) != nil else { return }
            handle(.closed(end.id, reason: "connection closed"), at: end.node, time: time)
        case .wake(let node):
            guard let due = wakeAt[node], due <= time else { return }
            wakeAt[node] = nil
            handle(.timer, at: node, time: time)
        case .dialled(let from, let to):
            if gone.contains(to) {  // it left while the dial was on its way
                queue.push(.event(.dialFailed(Self.address(of: to)), node: from), at: time + scenario.linkDelay)
            } else {
                open(from: from, to: to, at: time)
            }
        case .startBlob:
            startBlobWorkload(at: time)
        case .leave(let node):
            leave(node, at: time)
        case .join(let node):
            join(node, at: time)
        case .view(let event, let node):
            handleView(event, at: node, time: time)
        case .viewWake(let node):
            guard let due = viewWakeAt[node], due <= time else { return }
            viewWakeAt[node] = nil
            handleView(.timer, at: node, time: time)
        }
    }

    /// A dial that got through: a session with both ends opened and, a round trip later, established.
    private mutating func open(from dialler: Int, to listener: Int, at time: UInt64) {
        let outbound = LinkEnd(node: dialler, id: PeerID(nextPeer[dialler]))
        let inbound = LinkEnd(node: listener, id: PeerID(nextPeer[listener]))
        nextPeer[dialler] += 1
        nextPeer[listener] += 1
        sessions[outbound] = inbound
        sessions[inbound] = outbound
        handle(.opened(outbound.id, remote: Self.address(of: listener), dialled: Self.address(of: listener)), at: dialler, time: time)
        handle(.opened(inbound.id, remote: Self.address(of: dialler), dialled: nil), at: listener, time: time)
        let hash = Array("\(dialler)-\(listener)-\(time)".utf8)
        for (end, peer) in [(outbound, listener), (inbound, dialler)] {
            queue.push(
                .event(.established(end.id, peer: keys[peer].publicKey, handshakeHash: hash), node: end.node),
                at: time + 2 * scenario.linkDelay)
        }
    }

    private mutating func handle(_ event: PeerInstance.Event, at node: Int, time: UInt64) {
        guard !gone.contains(node) else { return }
        var pending = [event]
        while !pending.isEmpty {
            let next = pending.removeFirst()
            pending += carryOut(nodes[node].handle(next, now: time), at: node, time: time)
        }
    }

    /// The simulated shell: carries out a node's directives; the events that answer at once.
    private mutating func carryOut(_ directives: [PeerInstance.Directive], at node: Int, time: UInt64)
        -> [PeerInstance.Event]
    {
        var answers: [PeerInstance.Event] = []
        for directive in directives {
            switch directive {
            case .send(let message, let id):
                transmit(message, from: LinkEnd(node: node, id: id), at: time)
            case .sendDatagrams(let datagrams):
                answers.append(.datagramsRefused(datagrams))  // no datagram socket: never offered
            case .close(let id, _), .sayGoodbye(let id):
                hangUp(LinkEnd(node: node, id: id), at: time)
            case .dial(let address):
                guard let peer = Self.node(at: address), peer < keys.count else {
                    answers.append(.dialFailed(address))
                    continue
                }
                if gone.contains(peer) {
                    queue.push(.event(.dialFailed(address), node: node), at: time + 2 * scenario.linkDelay)  // refused
                } else if partitioned(node, peer, at: time) {
                    queue.push(.event(.dialFailed(address), node: node), at: time + 5_000)  // connect's timeout
                } else {
                    queue.push(.dialled(from: node, to: peer), at: time + 2 * scenario.linkDelay)
                }
            case .check(let documents, let from, _):
                answers += check(documents, from: from, at: node, time: time)
            case .loadItems(let channel, let peer, let payload):
                let items = stores[node].documents.compactMap { NegentropyItem(timestamp: $0.value.created, id: $0.key.bytes) }
                answers.append(.itemsLoaded(channel, for: peer, answering: payload, items: items.sorted()))
            case .loadDocuments(let ids, let peer):
                let documents = ids.compactMap { id in
                    stores[node].documents[id].map { GossipDocument(id: id, bytes: $0.bytes) }
                }
                answers.append(.documentsLoaded(documents, for: peer))
            case .loadPendingWrites(_, let limit, let peer):
                // Every simulated document is in the one channel.
                let newest = stores[node].pending.compactMap { id in
                    stores[node].documents[id].map { (created: $0.created, id: id, bytes: $0.bytes) }
                }.sorted { ($0.created, $0.id) < ($1.created, $1.id) }.suffix(limit)
                // As the shell: nothing pending, no answer.
                if !newest.isEmpty {
                    answers.append(.documentsLoaded(newest.map { GossipDocument(id: $0.id, bytes: $0.bytes) }, for: peer))
                }
            case .acknowledged(let ids):
                stores[node].pending.subtract(ids)
            case .wake(let at):
                wakeAt[node] = at
                queue.push(.wake(node: node), at: at)
            case .readBlob(let request, let peer):
                answers.append(.blobRead(answer(request, at: node), for: peer))
            case .storeBlobManifest(let manifest):
                stores[node].manifests[manifest.hash] = manifest
            case .storeBlobChunk(let hash, let index, let bytes):
                stores[node].chunks[hash, default: [:]][index] = bytes
                answers.append(.blobChunkStored(hash, index: index, success: true))
            case .blobCompleted:
                if node == scenario.blob?.fetcher, blobFetched == nil { blobFetched = time - scenario.warmUp }
            case .reconciled, .remember, .notify, .blobProgress, .blobHeldBack, .blobAbandoned:
                continue
            }
        }
        return answers
    }

    /// Checks signatures and stores what holds, as a node does; the arrival time is when it shows.
    private mutating func check(_ documents: [UnverifiedDocument], from: PeerID, at node: Int, time: UInt64)
        -> [PeerInstance.Event]
    {
        var verified: [DocumentID] = []
        var admissions: [PeerInstance.Admission] = []
        for document in documents {
            guard (try? document.verified()) != nil else {
                admissions.append(.init(document.id, from: from, .invalid))
                continue
            }
            if stores[node].documents[document.id] == nil {
                stores[node].documents[document.id] = (document.created, document.bytes)
                verified.append(document.id)
                if arrivals[document.id]?[node] == nil { arrivals[document.id, default: [:]][node] = time }
            }
            admissions.append(.init(document.id, from: from, .stored))
        }
        let invalid = admissions.filter { $0.outcome == .invalid }.map(\.id)
        return [.checked(verified: verified, invalid: invalid, from: from), .settled(admissions)]
    }

    /// A message over a session: after the link's delay, plus a retransmission timeout for each lost
    /// segment, and never before the message sent before it; held while a partition lasts.
    private mutating func transmit(_ message: GossipMessage, from end: LinkEnd, at time: UInt64) {
        guard let other = sessions[end] else { return }
        // Counted once the workload starts: setting sessions up is not a cost of the operations.
        if time >= scenario.warmUp {
            if case .acknowledge([]) = message {
                keepalivesSent += 1
            } else if message.isMembership {
                membershipMessages += 1
            } else {
                messagesSent += 1
                messagesByType[Self.typeName(message), default: 0] += 1
                if case .batch(_, let documents, _, _) = message { copiesSent += documents.count }
            }
        }
        if case .chunk = message, other.node == scenario.blob?.fetcher { chunksSent[end.node, default: 0] += 1 }
        let bytes = message.wireBytes
        var sent = time
        if let rate = scenario.uplinkBytesPerMillisecond {
            sent = max(time, uplinkFreeAt[end.node]) + UInt64((Double(bytes.count) / rate).rounded(.up))
            uplinkFreeAt[end.node] = sent
        }
        var delay = sent - time + scenario.linkDelay + UInt64.random(in: 0...scenario.jitter, using: &random)
        while Double.random(in: 0..<1, using: &random) < scenario.loss { delay += scenario.retransmissionTimeout }
        var arrival = time + delay
        if partitioned(end.node, other.node, at: time), let partition = scenario.partition {
            arrival = max(arrival, scenario.warmUp + partition.upperBound + delay)
        }
        arrival = max(arrival, lastArrival[end] ?? 0)
        lastArrival[end] = arrival
        queue.push(.message(bytes, link: other), at: arrival)
    }

    /// The message's type, as PROTOCOL.md §2.4 names it.
    private static func typeName(_ message: GossipMessage) -> String {
        switch message {
        case .batch: "batch"
        case .acknowledge: "acknowledge"
        case .channels: "channels"
        case .reconcile: "reconcile"
        case .request: "request"
        case .reconciled: "reconciled"
        case .datagrams: "datagrams"
        case .blobWant: "blob want"
        case .blobHave: "blob have"
        case .chunkRequest: "chunk request"
        case .chunk: "chunk"
        case .listening: "listening"
        case .membership: "membership"
        }
    }

    /// One end closed the session: the other end hears once its last messages arrived (unless it closed too).
    private mutating func hangUp(_ end: LinkEnd, at time: UInt64) {
        guard let other = sessions.removeValue(forKey: end) else { return }
        if !partitioned(end.node, other.node, at: time) {
            queue.push(.closed(other), at: max(time + scenario.linkDelay, lastArrival[end] ?? 0))
        }
        lastArrival[end] = nil
    }

    private func report() -> Report {
        var latencies: [UInt64] = []
        var lost = 0
        var lastArrival: UInt64 = 0
        // With churn, what counts is the nodes live at the end; a node's latency counts for documents written
        // after it joined (one that joins later fetches what it missed, which is not a document's spread).
        let expected = scenario.partialViews == nil ? Array(0..<scenario.nodes) : liveNodes
        var goneWithWriter = 0
        for (id, published) in publishedAt {
            let seen = arrivals[id] ?? [:]
            // A document whose only copy left with its writer (which left before sending it) is beyond any
            // protocol: counted apart, not as lost.
            if seen.count == 1, let writer = seen.keys.first, gone.contains(writer), scenario.partialViews != nil {
                goneWithWriter += 1
                continue
            }
            lost += expected.count { seen[$0] == nil }
            for (node, time) in seen where (joinedAt[node] ?? 0) <= published {
                latencies.append(time - published)
                lastArrival = max(lastArrival, time)
            }
        }
        latencies.sort()
        let operations = max(1, publishedAt.count)
        return Report(
            published: publishedAt.count, lost: lost, messages: messagesSent, keepalives: keepalivesSent,
            messagesPerOperation: Double(messagesSent) / Double(operations),
            medianLatency: latencies.isEmpty ? 0 : latencies[latencies.count / 2], maximumLatency: latencies.last ?? 0,
            catchUpAfterHeal: scenario.partition.map { partition in
                let heal = scenario.warmUp + partition.upperBound
                return lastArrival > heal ? lastArrival - heal : 0
            },
            blobFetched: blobFetched, chunksSent: chunksSent, blobIntact: fetchedBlobIsIntact,
            messagesByType: messagesByType, copiesPerDocument: Double(copiesSent) / Double(operations),
            sessionsPerNode: sessionCounts,
            churn: scenario.partialViews == nil
                ? nil : (left, joined, goneWithWriter, Double(membershipMessages) / Double(operations)),
            membershipStatePerNode: membershipStates)
    }

    private var membershipStates: (mean: Double, maximum: Int)? {
        guard scenario.partialViews != nil else { return nil }
        let sizes = liveNodes.map { node in
            scenario.viewsInNodes ? nodes[node].membershipStateSize ?? 0 : views[node].stateSize
        }
        return (Double(sizes.reduce(0, +)) / Double(max(1, sizes.count)), sizes.max() ?? 0)
    }

    private var sessionCounts: (mean: Double, maximum: Int) {
        let counts = Dictionary(grouping: sessions.keys, by: \.node).mapValues(\.count)
        let live = keys.count - gone.count
        return (Double(counts.values.reduce(0, +)) / Double(max(1, live)), counts.values.max() ?? 0)
    }

    private var fetchedBlobIsIntact: Bool {
        guard let workload = scenario.blob, let blob else { return false }
        let chunks = stores[workload.fetcher].chunks[blob.manifest.hash] ?? [:]
        return chunks.count == blob.chunks.count && blob.chunks.indices.allSatisfy { chunks[$0] == blob.chunks[$0] }
    }
}

// MARK: - Partial views and churn

extension Simulation {
    /// The first nodes join one after another; during the writing, nodes leave and as many new ones join.
    private mutating func scheduleJoinsAndChurn() {
        for node in 0..<scenario.nodes { queue.push(.join(node: node), at: UInt64(node) * scenario.joinSpacing) }
        for minute in 0..<scenario.writingDuration / 60_000 {
            for _ in 0..<Self.churn(scenario) {
                let start = scenario.warmUp + minute * 60_000
                queue.push(.join(node: -2), at: start + UInt64.random(in: 0..<60_000, using: &random))
                queue.push(.join(node: -1), at: start + UInt64.random(in: 0..<60_000, using: &random))
            }
        }
    }

    /// A node joins through a random live node (-1: the next new node; -2: a random live node leaves instead).
    private mutating func join(_ node: Int, at time: UInt64) {
        let live = liveNodes
        if node == -2 {
            if let leaving = live.randomElement(using: &random) {
                left += 1
                leave(leaving, at: time)
            }
            return
        }
        let node = node >= 0 ? node : notJoined.removeFirst()
        if node >= scenario.nodes { joined += 1 }
        gone.remove(node)
        joinedAt[node] = time
        handle(.joinedChanged([channel]), at: node, time: time)
        let contact = live.randomElement(using: &random).map(Self.address(of:))
        // The first nodes join one by one as the network forms, through one contact each; later joiners know more.
        let spares = time < scenario.warmUp ? [] : (1..<max(1, scenario.joinerAddresses)).compactMap { _ in
            live.randomElement(using: &random).map(Self.address(of:))
        }
        guard scenario.viewsInNodes else {
            handleView(.start(contact: contact), at: node, time: time)
            for spare in spares { handleView(.discovered(spare), at: node, time: time) }
            return
        }
        handle(.listening(port: 7_000), at: node, time: time)
        for address in (contact.map { [$0] } ?? []) + spares { handle(.known(address), at: node, time: time) }
    }

    /// The neighbours of a node that left hear their sessions with it end, and stop dialling it.
    private mutating func viewsLose(_ node: Int, at time: UInt64) {
        let address = Self.address(of: node)
        for other in views.indices where !gone.contains(other) && views[other].active.contains(address) {
            queue.push(.view(.lost(address), node: other), at: time + scenario.linkDelay)
            queue.push(.event(.forget(address), node: other), at: time + scenario.linkDelay)
        }
    }

    /// Runs a node's views, and carries out what they decide: membership messages over the network, sessions
    /// with neighbours (dialled by the node with the smaller number) and none with the others.
    private mutating func handleView(_ event: PartialView.Event, at node: Int, time: UInt64) {
        guard !gone.contains(node) else { return }
        for directive in views[node].handle(event, now: time) {
            switch directive {
            case .send(let message, let address):
                guard let peer = Self.node(at: address), peer < keys.count, !gone.contains(peer) else {
                    queue.push(.view(.unreachable(address), node: node), at: time + 2 * scenario.linkDelay)
                    continue
                }
                if time >= scenario.warmUp { membershipMessages += 1 }
                let delay = scenario.linkDelay + UInt64.random(in: 0...scenario.jitter, using: &random)
                let arrival = membershipArrivals.arrival(from: node, to: peer, at: time + delay)
                queue.push(.view(.received(message, from: Self.address(of: node)), node: peer), at: arrival)
            case .keep(let address):
                if let peer = Self.node(at: address), node < peer { handle(.connect(address), at: node, time: time) }
            case .drop(let address):
                handle(.forget(address), at: node, time: time)
                guard let peer = Self.node(at: address) else { continue }
                for end in sessions.keys.filter({ $0.node == node && sessions[$0]?.node == peer }) {
                    hangUp(end, at: time)
                    handle(.closed(end.id, reason: "no longer a neighbour"), at: node, time: time)
                }
            case .wake(let at):
                guard at != UInt64.max, viewWakeAt[node].map({ at < $0 || $0 <= time }) ?? true else { continue }
                viewWakeAt[node] = at
                queue.push(.viewWake(node: node), at: max(at, time))
            }
        }
    }
}
