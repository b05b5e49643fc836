import DongneNet
import DongneStore
import Foundation

/// The shell around the gossip core: TCP connections, secure sessions, timers, and the node's store.
///
/// It runs on the node's ``EventLoop``, with the listener hub: a datagram is read, opened, checked and shown to
/// listeners by that one thread, and every connection's bytes are handed to it in order by the connection's
/// reader. Session actions become socket writes; gossip directives become session messages, admissions into
/// the store (which shows new documents to listeners), and timers.
actor PeerNetwork {
    /// Received documents checked in place (``admit(_:)``): who sent them, what passed, and the channels whose
    /// listeners are to see them.
    typealias CheckedArrival = (
        documents: [(document: UnverifiedDocument, from: PeerID)], admitted: AdmittedBatch, showing: Set<ChannelID>
    )

    struct Link {
        let connection: TCPConnection
        var session: SecureSession
        let isOutbound: Bool
        var peer: PublicKey?
        var refused = 0
        /// Messages of types this version does not know, ignored.
        var unknownMessages = 0
        var rateLimited = 0
        var tokens = PeerNetwork.burst
        /// Documents from this peer being checked and stored.
        var admitting = 0
        /// Documents from this peer shown before their checks, whose checks are not done yet.
        let shownUnchecked = ShownUncheckedCount()
        var tokensAt = ContinuousClock.now
        /// This session's datagram keys and replay window, once established.
        var datagram: DatagramChannel?
        /// Where the peer takes datagrams for this session, and the index it tags them with.
        var datagramRoute: (address: SocketAddress, index: UInt32)?
        /// The index this node tags the session's datagrams with.
        var datagramIndex: UInt32?
        var datagramsDropped = 0
        /// Whether the peer has sent anything over the session (so it has the session established too).
        var hasReceived = false
        /// When the peer last sent anything, and when this node last sent it anything.
        var lastHeard = ContinuousClock.now
        var lastSent = ContinuousClock.now
        /// Sessions with the same peer that close once this one has carried the peer's first message.
        var replaces: [PeerID] = []
    }

    /// Invalid documents after which a peer is disconnected and ignored for ``banDuration``.
    static let refusalLimit = 100
    static let banDuration: Duration = .seconds(600)
    /// Documents a peer may send at once, and per second over time: above what a core can verify, so that an
    /// honest catch-up is never slowed, yet bounded.
    static let burst = 30_000.0
    /// Messages of unknown types a session may carry (PROTOCOL.md §2.4): far more than a later version sends.
    static let unknownMessageLimit = 10_000
    static let documentsPerSecond = 30_000.0
    /// Documents from one peer that may wait for their checks at once: beyond it (a peer sending faster than
    /// this node verifies), batches are dropped unacknowledged, so memory stays bounded. A sender's full window
    /// (32 batches of at most 256) fits.
    static let maximumAdmitting = 10_000

    /// The node this network serves; weak, so that a node dropped without `stop()` is not kept alive (or
    /// read after it is gone) by a connection's reader or a timer's task.
    weak var owner: Node?
    /// The thread this actor runs on (shared with the node's listener hub).
    let loop: EventLoop
    let identity: SigningKey
    let store: Store
    let clock: NodeClock
    private let networkKey: NetworkKey
    var gossip = GossipInstance()
    var links: [PeerID: Link] = [:]
    private var nextPeer: UInt64 = 1
    private var listener: TCPListener?
    /// The UDP socket for datagrams: bound with the listener (same port when free), else at the first session.
    var datagramSocket: UDPSocket?
    /// The address the datagram socket binds to: the one the node listens on.
    var datagramHost = "0.0.0.0"
    /// Sessions by the index their datagrams carry.
    var datagramSessions: [UInt32: PeerID] = [:]
    /// DNS-SD, when the node uses it, and what it found.
    var discovery: DNSServiceDiscovery?
    var directory = DiscoveryDirectory(ownInstance: "")
    /// Dialled addresses whose session turned out to duplicate one with the same peer: dialled again only
    /// once that peer's session ends.
    var coveredAddresses: [SocketAddress: PublicKey] = [:]
    var wakeAt: UInt64?
    /// Identities ignored until a moment, for having sent too many invalid documents.
    var banned: [PublicKey: ContinuousClock.Instant] = [:]
    /// Identities whose documents are checked before they show: each sent one of its own whose signature
    /// failed (see ``mayShowBeforeCheck(_:)``).
    var checkedFirst: Set<PublicKey> = []
    var closedTraffic = (sent: 0, received: 0)
    /// Addresses to stay connected to, with the current pause before the next dial.
    var dialTargets: [SocketAddress: UInt64] = [:]
    /// The address each dialled session went to.
    var dialled: [PeerID: SocketAddress] = [:]
    /// Short, for a LAN: after a partition heals, a session comes back within one pause and a dial.
    static let maximumRedialPause: UInt64 = 4_000
    static let antiEntropyInterval: UInt64 = 30_000
    /// Reconciliations with peers: the pure core (PROTOCOL.md §2.5).
    var reconciliation = ReconciliationInstance()
    /// This node's own latest documents, which reconciliation counts before the store may have committed them.
    var recentlyPublished = RecentlyPublished()
    private let start = ContinuousClock.now
    var stopped = false
    /// Received documents checked in place, to show and store once the handler that checked them is done.
    var checkedArrivals: [CheckedArrival] = []
    /// Channels whose listeners are to see messages held straight from their authors (see
    /// ``admitFromTheirAuthors(_:)``), shown with the checked arrivals.
    var authenticatedShowing: Set<ChannelID> = []
    /// Whether a datagram is being handled (it passes on its checked arrivals itself).
    var handlingDatagram = false
    /// Whether a task to pass on checked arrivals is queued already.
    var passingOnScheduled = false
    let events: AsyncStream<PeerEvent>.Continuation
    /// Peer events, for status lines; buffered up to 256 (the oldest dropped).
    nonisolated let peerEvents: AsyncStream<PeerEvent>

    init(node: Node, networkKey: NetworkKey) {
        self.owner = node
        self.loop = node.loop
        self.identity = node.identity
        self.store = node.store
        self.clock = node.configuration.clock
        self.networkKey = networkKey
        (peerEvents, events) = AsyncStream.makeStream(of: PeerEvent.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// The node's event loop.
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// Starts listening on `host` (an IPv4 address; `0.0.0.0`: every interface) and `port` (0: any free port);
    /// the address it listens on.
    func listen(host: String, port: UInt16) throws -> SocketAddress {
        let listener = try TCPListener(host: host, port: port) { [weak self] connection in
            guard let self else { return connection.close() }
            Task { await self.adopt(connection, outbound: false) }
        }
        self.listener = listener
        datagramHost = host
        openDatagramSocket(port: listener.address.port)
        return listener.address
    }

    /// Dials a peer and starts a session with it; from then on the node dials it again, with growing pauses
    /// (1 s doubling to 30 s), whenever the session is lost or the peer does not answer.
    func connect(to address: SocketAddress) async throws {
        if dialTargets[address] == nil { dialTargets[address] = 0 }
        do { try await dial(address) } catch {
            scheduleRedial(address)
            throw error
        }
    }

    func dial(_ address: SocketAddress) async throws {
        let connection = try await Task.detached { try TCPConnection.connect(to: address) }.value
        let id = adopt(connection, outbound: true)
        if let id { dialled[id] = address }
    }

    func scheduleRedial(_ address: SocketAddress) {
        guard !stopped, let previous = dialTargets[address] else { return }
        let pause = min(max(1_000, previous * 2), Self.maximumRedialPause)
        dialTargets[address] = pause
        Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(pause))
            await self?.redial(address)
        }
    }

    func redial(_ address: SocketAddress) async {
        guard !stopped, !dialled.values.contains(address) else { return }
        do { try await dial(address) } catch { scheduleRedial(address) }
    }

    /// Every 30 s each joined channel is reconciled with one random peer that carries it: push gossip repairs
    /// loss while a session lasts, this repairs what slipped through.
    func startAntiEntropy() {
        Task { [weak self] in
            while let self, await !self.stopped {
                try? await Task.sleep(for: .milliseconds(Self.antiEntropyInterval))
                await self.antiEntropyRound()
            }
        }
    }

    private func antiEntropyRound() {
        guard !stopped else { return }
        for channel in joinedChannels() {
            let candidates = links.keys.filter { links[$0]?.peer != nil && gossip.channels(of: $0).contains(channel) }
            guard let peer = candidates.randomElement() else { continue }
            carryOut(reconciliation.handle(.start(channel, with: peer)))
        }
    }

    /// Says goodbye to every peer and stops listening.
    func stop() {
        stopped = true
        listener?.close()
        datagramSocket?.close()
        discovery?.stop()
        for id in links.keys.sorted() { perform(links[id]?.session.close() ?? [], on: id) }
        events.finish()
    }

    /// Bytes this node's sessions have written and read, closed ones included.
    func traffic() -> (sent: Int, received: Int) {
        let datagrams = datagramSocket?.traffic ?? (sent: 0, received: 0)
        let initial = (closedTraffic.sent + datagrams.sent, closedTraffic.received + datagrams.received)
        return links.values.reduce(initial) { total, link in
            let traffic = link.connection.traffic
            return (total.sent + traffic.sent, total.received + traffic.received)
        }
    }

    /// The established sessions.
    func peers() -> [PeerInfo] {
        links.keys.compactMap(info).sorted { $0.identity < $1.identity }
    }

    /// A document this node wrote (queued for the store) goes out to peers, then the messages held for it are
    /// shown to local listeners in `showing` (the hub shares this loop).
    func published(_ document: Document, showing: Set<ChannelID> = []) {
        advanceGossipClock()
        recentlyPublished.add(document)
        apply(gossip.handle(.published(id: document.id, channel: document.channel, bytes: document.bytes)))
        owner?.showNow(showing)
    }

    /// The user's channels changed: tell every peer.
    func announceChannels() {
        let joined = joinedChannels()
        for id in links.keys where links[id]?.peer != nil { sendGossip(.channels(joined), to: id) }
        carryOut(reconciliation.handle(.joinedChanged(joined)))
    }

    // MARK: Connections

    @discardableResult
    private func adopt(_ connection: TCPConnection, outbound: Bool) -> PeerID? {
        guard !stopped else {
            connection.close()
            return nil
        }
        let id = PeerID(nextPeer)
        nextPeer += 1
        var session = SecureSession(
            role: outbound ? .initiator : .responder, identity: identity, networkKey: networkKey)
        let opening = session.start()
        links[id] = Link(connection: connection, session: session, isOutbound: outbound)
        // Handed to the loop by the connection's reader, in order. The reader pauses while 4 MiB wait
        // unprocessed: a peer that sends faster than this node works through it is slowed by TCP itself, and
        // memory stays bounded.
        connection.start(
            consumedOnReturn: false,
            onReceive: { [weak self, weak loop] chunk in
                guard let loop else { return connection.close() }  // the network is gone
                loop.execute { [weak self] in
                    self?.assumeIsolated { $0.received(chunk, on: id) }
                    connection.consumed(chunk.count)
                }
            },
            onClose: { [weak self, weak loop] _ in
                loop?.execute { [weak self] in self?.assumeIsolated { $0.closed(id, reason: "connection closed") } }
            })
        perform(opening, on: id)
        return id
    }

    private func received(_ bytes: [UInt8], on id: PeerID) {
        guard var link = links[id] else { return }
        let actions = link.session.receive(bytes)
        link.lastHeard = .now
        links[id] = link
        perform(actions, on: id)
    }

    func perform(_ actions: [SecureSession.Action], on id: PeerID) {
        for action in actions {
            guard let link = links[id] else { return }
            switch action {
            case .send(let bytes): link.connection.send(bytes)
            case .established(let peer): established(id, peer: peer)
            case .deliver(let bytes):
                let message: GossipMessage
                do { message = try GossipMessage(wireBytes: bytes) } catch {
                    if case .unknownType = error, ignoreUnknownMessage(on: id) { continue }
                    return closeLink(id, "malformed gossip")
                }
                handle(message, from: id)
            case .close(.goodbye):
                // Our goodbye (queued just before) must reach the peer: close once it is written.
                link.connection.closeAfterWrites()
                closed(id, reason: "\(SessionError.goodbye)")
            case .close(let reason): closeLink(id, "\(reason)")
            }
        }
    }

    /// A message of a later version's type is ignored and counted; whether the session may go on (a peer
    /// that sends more of them than any version would is cut off).
    private func ignoreUnknownMessage(on id: PeerID) -> Bool {
        links[id]?.unknownMessages += 1
        return (links[id]?.unknownMessages ?? 0) <= Self.unknownMessageLimit
    }

    func established(_ id: PeerID, peer: PublicKey) {
        guard peer != identity.publicKey else {
            if let address = dialled[id] { dialTargets[address] = nil }  // this node's own address: never again
            return closeLink(id, "that address is this node itself")
        }
        if let until = banned[peer], ContinuousClock.now < until {
            return closeLink(id, "ignored for a while: it sent too many invalid documents")
        }
        let alreadyConnected = links.contains { $0.value.peer == peer }
        links[id]?.peer = peer
        settleDuplicate(id, peer: peer)
        guard links[id] != nil else { return }  // it was a duplicate, and is closed
        if let address = dialled[id] {
            dialTargets[address] = 0
            Task { [store, clock] in try? await store.rememberPeer("\(address)", at: clock.now()) }
        }
        apply(gossip.handle(.connected(id, channels: [], tag: PeerTag(identity: peer))))
        sendGossip(.channels(joinedChannels()), to: id)
        offerDatagrams(on: id)
        if !alreadyConnected, let info = info(id) { events.yield(.joined(info)) }
    }

    func closeLink(_ id: PeerID, _ reason: String) {
        links[id]?.connection.close()
        closed(id, reason: reason)
    }

    func closed(_ id: PeerID, reason: String) {
        let info = info(id)
        guard let link = links.removeValue(forKey: id) else { return }
        let traffic = link.connection.traffic
        closedTraffic = (closedTraffic.sent + traffic.sent, closedTraffic.received + traffic.received)
        carryOut(reconciliation.handle(.disconnected(id)))
        if let index = link.datagramIndex { datagramSessions[index] = nil }
        // Still connected to the peer through another session (a duplicate closed): no status line, and the
        // address is dialled again only when the peer's last session ends.
        let stillConnected = link.peer.map { peer in links.values.contains { $0.peer == peer } } ?? false
        let address = dialled.removeValue(forKey: id)
        if stillConnected, let address, let peer = link.peer {
            coveredAddresses[address] = peer
        } else if let address {
            scheduleRedial(address)
        }
        if !stillConnected, let peer = link.peer {
            for (covered, owner) in coveredAddresses where owner == peer {
                coveredAddresses[covered] = nil
                scheduleRedial(covered)
            }
        }
        apply(gossip.handle(.disconnected(id)))
        if stillConnected { return }
        if let info {
            events.yield(.left(info, reason: reason))
        } else {
            events.yield(.refused(address: "\(link.connection.remote)", reason: reason))
        }
    }

    func info(_ id: PeerID) -> PeerInfo? {
        guard let link = links[id], let peer = link.peer else { return nil }
        return PeerInfo(
            identity: peer, address: "\(link.connection.remote)", isOutbound: link.isOutbound, refused: link.refused,
            rateLimited: link.rateLimited, datagramsDropped: link.datagramsDropped)
    }

    // MARK: Gossip

    func apply(_ directives: [GossipInstance.Directive]) {
        var admissions: [(document: UnverifiedDocument, from: PeerID)] = []
        var datagrams: [(message: GossipMessage, to: PeerID)] = []
        for directive in directives {
            switch directive {
            case .send(let message, let peer): sendGossip(message, to: peer)
            case .sendDatagram(let message, let peer): datagrams.append((message, peer))
            case .admit(let document, let peer):
                admissions.append((document, peer))
                links[peer]?.admitting += 1
            case .misbehaved(let peer, let count): refuse(count, from: peer)
            case .wake(let at): schedule(at)
            case .delivered(let ids, let peer):
                owner?.acknowledged(ids)
                carryOut(reconciliation.handle(.delivered(ids, to: peer)))
                offerMore(to: peer)
            }
        }
        // A new message's datagrams leave together, to every peer at once.
        sendDatagrams(datagrams)
        // The documents of one batch are checked and stored together: one ingest, one commit, one refresh.
        if !admissions.isEmpty { admit(admissions) }
    }

    func sendGossip(_ message: GossipMessage, to id: PeerID) {
        guard var link = links[id] else { return }
        let actions = link.session.send(message.wireBytes)
        link.lastSent = .now
        links[id] = link
        perform(actions, on: id)
    }

    /// Tells the core the time before an event that may send at once.
    func advanceGossipClock() {
        apply(gossip.handle(.tick(now: now)))
    }

    private func schedule(_ at: UInt64) {
        if let wakeAt, wakeAt <= at { return }
        wakeAt = at
        let delay = at > now ? at - now : 0
        Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(delay))
            await self?.tick()
        }
    }

    private func tick() {
        wakeAt = nil
        apply(gossip.handle(.tick(now: now)))
    }

    private var now: UInt64 {
        let elapsed = ContinuousClock.now - start
        return UInt64(elapsed.components.seconds) * 1_000
            + UInt64(elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    func joinedChannels() -> [ChannelID] {
        ((try? store.joinedChannels()) ?? []).sorted()
    }
}
