import DongneCore
import DongneNet
import DongneStore
import Foundation
import DongneSystem

/// The shell around ``PeerInstance``: it turns sockets, timers, DNS-SD reports and store reads into the core's
/// events, and carries out the core's directives through one function, ``run(_:)``. It decides nothing about
/// the protocol: every rule lives in the core, where it is tested without sockets.
///
/// It runs on the node's ``EventLoop``, with the listener hub: the loop reads every connection and the datagram
/// socket, fires the one timer the core asks for (and the one that starts waiting checks), and runs this
/// actor's code, one thing at a time. Each connection's ``SecureSession`` lives here, beside its socket: the
/// core sees a connection open, its peer proved, each message's plaintext, and its end.
actor PeerNetwork {
    /// One connection and the session over it (none until the core has let the connection go on: a connection
    /// over the host's budgets closes before any key is made for it).
    private struct Connection {
        let socket: TCPConnection
        var session: SecureSession?
    }

    /// Received documents checked on the loop, to show and store once the work at hand is done.
    private typealias CheckedArrival = (documents: [UnverifiedDocument], from: PeerID, admitted: AdmittedBatch)

    /// The node this network serves; weak, so that a node dropped without `stop()` is not kept alive (or read
    /// after it is gone) by a connection's handler or the timer.
    private weak var owner: Node?
    /// The thread this actor runs on (shared with the node's listener hub).
    let loop: EventLoop
    private let identity: SigningKey
    private let store: Store
    private let networkKey: NetworkKey
    private var core: PeerInstance
    private var connections: [PeerID: Connection] = [:]
    private var nextPeer: UInt64 = 1
    private var listener: TCPListener?
    /// The UDP socket for datagrams: bound with the listener (same port when free), else at the first session.
    private var datagramSocket: UDPSocket?
    private var datagramHost = "0.0.0.0"
    private var discovery: DNSServiceDiscovery?
    private var timer: EventLoop.Timer?
    /// Callers of ``connect(to:)`` waiting for their dial.
    private var waitingDials: [PeerAddress: [CheckedContinuation<Void, any Error>]] = [:]
    private var closedTraffic = (sent: 0, received: 0)
    /// This node's own latest documents, which reconciliation counts before the store may have committed them.
    private var recentlyPublished = RecentlyPublished()
    private let start = ContinuousClock.now
    private var stopped = false
    /// Events waiting for the core while it handles another (a directive's answer, say): handled in order.
    private var events: [PeerInstance.Event] = []
    private var handlingEvents = false
    private var checkedArrivals: [CheckedArrival] = []
    /// Channels whose listeners are to see messages shown before their checks, with the checked arrivals.
    private var shownFirst: Set<ChannelID> = []
    /// Messages shown before their checks whose checks wait for ``shownFirstCheckDelay``, in arrival order (a
    /// batch a peer waits for is checked at once, before them), and the timer that starts them.
    private var waitingChecks: [WaitingCheck] = []
    private var waitingChecksTimer: EventLoop.Timer?
    /// A refresh of listeners for photos' progress is scheduled.
    private var photoRefreshDue = false
    private let notices: AsyncStream<PeerEvent>.Continuation
    /// Peer events, for status lines; buffered up to 256 (the oldest dropped).
    nonisolated let peerEvents: AsyncStream<PeerEvent>
    /// Where each received document's stages are timed, when the configuration asks.
    private let trace: DeliveryTrace?

    init(node: Node, networkKey: NetworkKey) {
        self.owner = node
        self.trace = node.configuration.deliveryTrace
        self.loop = node.loop
        self.identity = node.identity
        self.store = node.store
        self.networkKey = networkKey
        var settings = Self.settings(descriptors: DescriptorLimit.raise())
        settings.requiredStampStrength = node.configuration.admission.requiredStampStrength
        settings.partialView = node.configuration.partialView
        core = PeerInstance(
            identity: node.identity.publicKey, now: 0, random: SplitMix64(seed: .random(in: .min ... .max)),
            settings: settings)
        (peerEvents, notices) = AsyncStream.makeStream(of: PeerEvent.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// The core's settings, with no more sessions than the process has descriptors for beside those reserved
    /// for the store (``DescriptorLimit/reserved``) and for connections in their handshake and dialled.
    static func settings(descriptors: Int?) -> PeerInstance.Settings {
        var settings = PeerInstance.Settings()
        let available = (descriptors ?? 1_024) - DescriptorLimit.reserved - 2 * settings.maximumHandshaking
        settings.maximumSessions = max(8, min(settings.maximumSessions, available))
        return settings
    }

    /// The node's event loop.
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    // MARK: What the node asks

    /// Starts the core's clock with the channels this node carries.
    func begin() {
        handle(.joinedChanged(joinedChannels()))
        if let id = try? store.latestProfile(of: identity.publicKey), let profile = try? store.document(id) {
            handle(.ownProfile(GossipDocument(id: profile.id, bytes: profile.bytes)))
        }
    }

    /// Starts listening on `host` (an IPv4 address; `0.0.0.0`: every interface) and `port` (0: any free port);
    /// the address it listens on.
    func listen(host: String, port: UInt16) throws -> SocketAddress {
        let listener = try TCPListener(host: host, port: port, loop: loop) { [weak self] connection in
            guard let self else { return connection.close() }
            self.assumeIsolated { $0.adopt(connection, dialled: nil) }
        }
        self.listener = listener
        datagramHost = host
        openDatagramSocket(port: listener.address.port)
        handle(.listening(port: listener.address.port))
        return listener.address
    }

    /// An address where a peer was reached before: a spare of the partial views (without them, dialled and
    /// kept like one the user named, without waiting).
    func consider(_ address: SocketAddress) {
        guard !stopped else { return }
        handle(.known(PeerAddress(host: address.host, port: address.port)))
    }

    /// Advertises this node (when it listens on `port`) under a random instance name and dials the services
    /// found. Without a daemon, says so once and goes on; DNS-SD is tried again in the background.
    func startDiscovery(port: UInt16?) {
        guard discovery == nil, !stopped else { return }
        let instance = ServiceTXT.randomInstanceName()
        handle(.advertised(instance: instance))
        discovery = try? DNSServiceDiscovery(instance: instance, port: port, txt: ServiceTXT.record) {
            [weak self, loop] report in
            let event = Self.event(report)
            loop.execute { [weak self] in self?.assumeIsolated { $0.handle(.discovered(event)) } }
        }
        if discovery == nil { notices.yield(.discovery("DNS-SD unavailable: cannot start its thread")) }
    }

    /// Dials a peer and waits for the connection; from then on the node dials it again, with growing pauses,
    /// whenever the session is lost or the peer does not answer.
    func connect(to address: SocketAddress) async throws {
        guard !stopped else { throw SystemError(function: "connect", code: ECANCELED) }
        let target = PeerAddress(host: address.host, port: address.port)
        try await withCheckedThrowingContinuation { continuation in
            waitingDials[target, default: []].append(continuation)
            handle(.connect(target))
        }
    }

    /// Says goodbye to every peer and stops listening. Checks waiting out ``shownFirstCheckDelay`` start now,
    /// while the store is still open.
    func stop() {
        guard !stopped else { return }
        startWaitingChecks()
        handle(.stop)
        stopped = true
        listener?.close()
        datagramSocket?.close()
        discovery?.stop()
        if let timer { loop.cancel(timer) }
        for (_, waiting) in waitingDials {
            for continuation in waiting { continuation.resume(throwing: SystemError(function: "connect", code: ECANCELED)) }
        }
        waitingDials = [:]
        notices.finish()
    }

    /// Bytes this node's sessions and datagrams have written and read, closed sessions included.
    func traffic() -> (sent: Int, received: Int) {
        let datagrams = datagramSocket?.traffic ?? (sent: 0, received: 0)
        let initial = (closedTraffic.sent + datagrams.sent, closedTraffic.received + datagrams.received)
        return connections.values.reduce(initial) { total, connection in
            let traffic = connection.socket.traffic
            return (total.sent + traffic.sent, total.received + traffic.received)
        }
    }

    /// Batches gossip sent again for want of a timely acknowledgement, and the documents in them.
    func resends() -> (batches: Int, documents: Int) {
        core.gossipResends
    }

    /// The peers the user was told joined (not the sessions that carry a few membership messages).
    func peers() -> [PeerInfo] {
        core.joinedPeers.map(PeerInfo.init)
    }

    /// A document this node wrote (queued for the store) goes out to peers, then the messages held for it are
    /// shown to local listeners in `showing`. The sending may run on the writing thread (see
    /// `EventLoop.runIfFree(_:)`); the showing runs on the loop's own thread, where every listener callback
    /// runs (sentence 10 of the listener contract), before anything the hub is asked later; when no listener
    /// could see them, the loop is not woken for it.
    func published(_ document: Document, showing: Set<ChannelID> = []) {
        recentlyPublished.add(document)
        trace?.reached(.published, [document.id])
        handle(.published(GossipDocument(id: document.id, bytes: document.bytes), channel: document.channel))
        trace?.reached(.sent, [document.id])  // the core's datagrams went out within `handle`
        if case .profile = document.body { handle(.ownProfile(GossipDocument(id: document.id, bytes: document.bytes))) }
        guard !showing.isEmpty, let owner, owner.hub.assumeIsolated({ $0.hasListeners(in: showing) }) else { return }
        if loop.isOwnThread {
            owner.showNow(showing)
        } else {
            loop.execute { [weak owner] in owner?.showNow(showing) }
        }
    }

    /// An envelope of this node's own: sent by one random peer first, which spreads it (PROTOCOL.md §1.8.1); by
    /// the first peer that says it carries the space, when none does yet. The sealed photo it names is served to
    /// that peer alone at first.
    func stem(_ document: Document) {
        guard let channel = document.channel else { return }
        var photo: BlobHash?
        if case .sealed(let sealed) = document.body { photo = sealed.photo?.hash }
        handle(.stem(GossipDocument(id: document.id, bytes: document.bytes), channel: channel, photo: photo))
    }

    /// This node's own sealed photo, a moment after its envelope's stem: asked of every peer, as relays ask.
    func askForOwnPhoto(_ photo: BlobHash) { handle(.askForOwnPhoto(photo)) }

    /// A document this node published did not commit: reconciliation no longer counts it, and a copy a peer
    /// sends back (it went out before the store failed) is stored.
    func forgetPublished(_ id: DocumentID) {
        recentlyPublished.forget(id)
        handle(.unpublished(id))
    }

    /// The user's channels changed.
    func announceChannels() {
        handle(.joinedChanged(joinedChannels()))
    }

    // MARK: Events

    /// Hands an event to the core and carries out its directives; an event that comes meanwhile (a directive's
    /// answer) waits its turn. Once none is left, what was checked is shown and stored.
    private func handle(_ event: PeerInstance.Event) {
        events.append(event)
        guard !handlingEvents else { return }
        handlingEvents = true
        while !events.isEmpty {
            let next = events.removeFirst()
            run(core.handle(next, now: now))
        }
        handlingEvents = false
        passOnCheckedArrivals()
    }

    /// Milliseconds since the network started, on the monotonic clock.
    private var now: UInt64 {
        let elapsed = ContinuousClock.now - start
        return UInt64(elapsed.components.seconds) * 1_000
            + UInt64(elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    // MARK: Directives

    /// Carries out the core's directives, in order.
    private func run(_ directives: [PeerInstance.Directive]) {
        for directive in directives {
            switch directive {
            case .send(let message, let id): send(message.wireBytes, on: id)
            case .sendDatagrams(let datagrams): sendDatagrams(datagrams)
            case .close(let id, _): forget(id)?.close()
            case .sayGoodbye(let id): sayGoodbye(on: id)
            case .dial(let address): dial(address)
            case .check(let documents, let from, let mode): check(documents, from: from, mode: mode)
            case .loadItems(let channel, let peer, let payload):
                let stored = (try? store.reconciliationItems(in: channel)) ?? []
                let items = recentlyPublished.items(in: channel, stored: stored)
                handle(.itemsLoaded(channel, for: peer, answering: payload, items: items))
            case .loadDocuments(let ids, let peer): handle(.documentsLoaded(loadDocuments(ids), for: peer))
            case .loadPendingWrites(let channels, let limit, let peer):
                let documents = loadPendingWrites(in: channels, limit: limit)
                if !documents.isEmpty { handle(.documentsLoaded(documents, for: peer)) }
            case .acknowledged(let ids): owner?.acknowledged(ids)
            case .reconciled(let channel): owner?.reconciledNow(channel)
            case .remember(let address):
                Task { [store, clock = owner?.configuration.clock] in
                    try? await store.rememberPeer("\(address)", at: clock?.now() ?? 0)
                }
            case .notify(let notice): notices.yield(PeerEvent(notice))
            case .readBlob(let request, let peer): handle(.blobRead(readBlob(request, for: peer), for: peer))
            case .storeBlobManifest(let manifest): storeManifest(manifest)
            case .storeBlobChunk(let blob, let index, let bytes): storeChunk(blob, index: index, bytes: bytes)
            case .blobProgress: continue  // availability follows what is durable, below
            case .blobCompleted(let blob): owner?.spaceFetchEnded(blob, gotIt: true)
            case .blobHeldBack(let blob), .blobAbandoned(let blob):
                owner?.photos.setFetching(blob, false)
                owner?.spaceFetchEnded(blob)
            case .wake(let at): wake(at: at)
            }
        }
    }

    private func send(_ message: [UInt8], on id: PeerID) {
        guard var connection = connections[id], let actions = connection.session?.send(message) else { return }
        connections[id] = connection
        perform(actions, on: id)
    }

    private func sayGoodbye(on id: PeerID) {
        guard var connection = connections[id] else { return }
        for case .send(let bytes) in connection.session?.close() ?? [] { connection.socket.send(bytes) }
        forget(id)?.closeAfterWrites()  // the goodbye must reach the peer: closed once it is written
    }

    /// Drops a connection from the table (its traffic counted with the closed ones); its socket, to close.
    @discardableResult
    private func forget(_ id: PeerID) -> TCPConnection? {
        guard let connection = connections.removeValue(forKey: id) else { return nil }
        let traffic = connection.socket.traffic
        closedTraffic = (closedTraffic.sent + traffic.sent, closedTraffic.received + traffic.received)
        return connection.socket
    }

    private func wake(at time: UInt64) {
        if let timer { loop.cancel(timer) }
        timer = loop.schedule(at: start + .milliseconds(time)) { [weak self] in
            self?.assumeIsolated { network in
                network.timer = nil
                network.handle(.timer)
            }
        }
    }

    private func loadDocuments(_ ids: [DocumentID]) -> [GossipDocument] {
        var documents = (try? store.gossipDocuments(ids)) ?? []
        if documents.count < ids.count {
            let found = Set(documents.map(\.id))
            documents += recentlyPublished.gossipDocuments(ids.filter { !found.contains($0) })
        }
        return documents
    }

    /// This node's writes in `channels` that no peer has acknowledged, the newest `limit`, oldest first: those
    /// committed, and those whose commit is held back still.
    private func loadPendingWrites(in channels: [ChannelID], limit: Int) -> [GossipDocument] {
        let committed = (try? store.pendingWriteDocuments(in: channels, limit: limit)) ?? []
        let found = Set(committed.map(\.id))
        let held = recentlyPublished.gossipDocuments(in: Set(channels)).filter {
            !found.contains($0.id) && store.isPendingWrite($0.id)
        }
        return Array((committed + held).suffix(limit))
    }

    // MARK: Connections

    private func dial(_ address: PeerAddress) {
        guard let socketAddress = SocketAddress(host: address.host, port: address.port) else {
            return dialEnded(address, .failure(SystemError(function: "connect", code: EINVAL)))
        }
        TCPConnection.connect(to: socketAddress, on: loop) { [weak self] result in
            guard let self else {
                if case .success(let connection) = result { connection.close() }
                return
            }
            self.assumeIsolated { $0.dialEnded(address, result) }
        }
    }

    private func dialEnded(_ address: PeerAddress, _ result: Result<TCPConnection, SystemError>) {
        let waiting = waitingDials.removeValue(forKey: address) ?? []
        switch result {
        case .success(let connection):
            adopt(connection, dialled: address)
            for continuation in waiting { continuation.resume() }
        case .failure(let error):
            handle(.dialFailed(address))
            for continuation in waiting { continuation.resume(throwing: error) }
        }
    }

    private func adopt(_ socket: TCPConnection, dialled: PeerAddress?) {
        let id = PeerID(nextPeer)
        nextPeer += 1
        connections[id] = Connection(socket: socket, session: nil)
        handle(.opened(id, remote: PeerAddress(host: socket.remote.host, port: socket.remote.port), dialled: dialled))
        guard connections[id] != nil else { return }  // over a budget: closed already
        var session = SecureSession(
            role: dialled != nil ? .initiator : .responder, identity: identity, networkKey: networkKey)
        let opening = session.start()
        connections[id]?.session = session
        socket.start(
            onReceive: { [weak self] bytes in self?.assumeIsolated { $0.received(bytes, on: id) } },
            onClose: { [weak self] error in
                self?.assumeIsolated { $0.ended(id, reason: error.map { "\($0)" } ?? "connection closed") }
            })
        perform(opening, on: id)
    }

    private func received(_ bytes: [UInt8], on id: PeerID) {
        trace?.read()
        guard var connection = connections[id], let actions = connection.session?.receive(bytes) else { return }
        connections[id] = connection
        // Bytes that complete no message (a handshake's, or part of a frame) still show the peer is there.
        if !actions.contains(where: Self.carriesMessage) { handle(.heard(id)) }
        perform(actions, on: id)
    }

    private static func carriesMessage(_ action: SecureSession.Directive) -> Bool {
        switch action {
        case .deliver, .established: true
        case .send, .close: false
        }
    }

    /// The connection ended by itself (the peer closed it, or it failed).
    private func ended(_ id: PeerID, reason: String) {
        guard forget(id) != nil else { return }
        handle(.closed(id, reason: reason))
    }

    /// Carries out what a session asks: bytes to write, and the events it produced for the core.
    private func perform(_ actions: [SecureSession.Directive], on id: PeerID) {
        for action in actions {
            guard let connection = connections[id] else { return }
            switch action {
            case .send(let bytes): connection.socket.send(bytes)
            case .established(let peer):
                openDatagramSocket(port: 0)
                handle(.established(id, peer: peer, handshakeHash: connection.session?.handshakeHash ?? []))
            case .deliver(let bytes): handle(.message(id, bytes))
            case .close(let reason):
                // After a goodbye, what is queued still goes out; any other end closes at once.
                if reason == .goodbye { forget(id)?.closeAfterWrites() } else { forget(id)?.close() }
                handle(.closed(id, reason: "\(reason)"))
            }
        }
    }

    // MARK: Datagrams

    /// Binds the datagram socket, on `port` when it is free (else any port: the port is announced anyway).
    private func openDatagramSocket(port: UInt16) {
        guard datagramSocket == nil, !stopped else { return }
        // Read on this actor's own loop, whose thread then handles the datagram at once.
        // A datagram for no session (a flood of random ones, say) is dropped before it becomes an event: the
        // core's every event costs more than this look-up.
        let receive: @Sendable ([UInt8], SocketAddress) -> Void = { [weak self] bytes, _ in
            self?.assumeIsolated { network in
                network.trace?.read()
                if network.core.mayHoldSession(forDatagram: bytes) { network.handle(.datagram(bytes)) }
            }
        }
        datagramSocket =
            (try? UDPSocket(host: datagramHost, port: port, loop: loop, onReceive: receive))
            ?? (try? UDPSocket(host: datagramHost, port: 0, loop: loop, onReceive: receive))
        if let socket = datagramSocket { handle(.datagramPort(socket.address.port)) }
    }

    /// Sends datagrams in one system call (see `UDPSocket.send(_:)`); the core hears of those refused.
    private func sendDatagrams(_ datagrams: [OutgoingDatagram]) {
        guard let socket = datagramSocket else { return handle(.datagramsRefused(datagrams)) }
        var addressed: [(bytes: [UInt8], to: SocketAddress)] = []
        var unaddressable: [OutgoingDatagram] = []
        for datagram in datagrams {
            if let address = SocketAddress(host: datagram.address.host, port: datagram.address.port) {
                addressed.append((datagram.bytes, address))
            } else {
                unaddressable.append(datagram)
            }
        }
        let sendable = datagrams.filter { !unaddressable.contains($0) }
        let refused = unaddressable + socket.send(addressed).map { sendable[$0] }
        if !refused.isEmpty { handle(.datagramsRefused(refused)) }
    }

    // MARK: Photos

    /// A peer's connection holding more than this unsent gets no chunks (its requests count as over budget):
    /// a peer that asks for everything and reads nothing holds at most this much of this node's memory.
    static let maximumUnsentForChunks = 1 << 20

    /// Starts (or resumes) fetching a blob.
    func fetch(_ blob: BlobHash, manifest: BlobManifest?, held: [Int], sizeLimit: Int) {
        handle(.fetchBlob(blob, manifest: manifest, held: held, sizeLimit: sizeLimit))
    }

    /// Stops fetching a blob, whoever asked for it.
    func cancelFetch(_ blob: BlobHash) {
        handle(.cancelBlobFetch(blob))
        owner?.photos.setFetching(blob, false)
        owner?.spaceFetchEnded(blob)
    }

    /// The answer to a peer's `blob want` or `chunk request`, from the photo library and the store; nil (over
    /// budget) while the peer's connection holds too much unsent.
    private func readBlob(_ request: GossipMessage, for peer: PeerID) -> [GossipMessage]? {
        guard let owner, let connection = connections[peer],
            connection.socket.unsentBytes <= Self.maximumUnsentForChunks
        else { return nil }
        let blob: BlobHash
        switch request {
        case .blobWant(let hash), .chunkRequest(let hash, _): blob = hash
        case .batch, .acknowledge, .channels, .reconcile, .request, .reconciled, .datagrams, .blobHave, .chunk,
            .listening, .membership:
            return []
        }
        let entry = owner.photos.entry(blob)
        return BlobAnswer.answer(request, manifest: entry.manifest, held: entry.held) { [store] index in
            try? store.blobChunk(blob, index: index)
        }
    }

    private func storeManifest(_ manifest: BlobManifest) {
        // A sealed photo is kept only while an envelope stored here paid for its bytes, however it was asked for
        // (an envelope, or a message or avatar naming it): no other way keeps ciphertext nobody paid for.
        if manifest.isSealed, ((try? store.spacePhotoSize(manifest.hash)) ?? nil).map({ $0 >= manifest.size }) != true {
            return cancelFetch(manifest.hash)
        }
        // A photo over the automatic size stops at its manifest anyway (the fetch core holds it back): not charged.
        if let owner, !owner.photos.chargeAutomatic(
            manifest, budget: owner.configuration.automaticPhotoBytesPerAuthor,
            automaticLimit: owner.configuration.automaticPhotoFetchBytes)
        {
            handle(.cancelBlobFetch(manifest.hash))
            owner.photos.setFetching(manifest.hash, false)
        }
        store.submitBlobManifest(manifest, at: NodeClock.system.now()) { [weak self] result in
            guard case .success = result else { return }
            self?.loop.execute { [weak self] in
                self?.assumeIsolated { network in
                    network.owner?.photos.manifestStored(manifest)
                    network.photosChanged()
                }
            }
        }
    }

    private func storeChunk(_ blob: BlobHash, index: Int, bytes: [UInt8]) {
        store.submitBlobChunk(blob, index: index, bytes: bytes) { [weak self] result in
            self?.loop.execute { [weak self] in
                self?.assumeIsolated { network in network.chunkStored(blob, index: index, result) }
            }
        }
    }

    /// A fetched chunk's storing ended: the fetch core may ask for more; listeners hear of the progress.
    private func chunkStored(_ blob: BlobHash, index: Int, _ result: Result<Void, StoreError>) {
        handle(.blobChunkStored(blob, index: index, success: (try? result.get()) != nil))
        guard case .success = result, let owner else {
            // Not stored (a full disk, say): the photo shows as missing, and is fetched again when asked for.
            owner?.photos.setFetching(blob, false)
            return
        }
        if owner.photos.chunkStored(blob, index: index) {
            // A sealed photo whole here may be one of the user's direct messages': opened now if so.
            if owner.photos.entry(blob).manifest?.isSealed == true { Task { await owner.openDirectPhotos() } }
            photosChanged(now: true)
            Task { await owner.evictPhotosOverBudget() }
        } else {
            photosChanged()
        }
    }

    /// Listeners see photos' availability change (metadata, sentence 11 of the listener contract): at once
    /// when a photo is complete, else at most every ``photoRefreshInterval`` while chunks arrive.
    private func photosChanged(now: Bool = false) {
        guard let owner else { return }
        if now {
            photoRefreshDue = false
            return owner.hub.assumeIsolated { $0.refreshAll() }
        }
        guard !photoRefreshDue else { return }
        photoRefreshDue = true
        _ = loop.schedule(at: .now + Self.photoRefreshInterval) { [weak self] in
            self?.assumeIsolated { network in
                guard network.photoRefreshDue else { return }
                network.photoRefreshDue = false
                network.owner?.hub.assumeIsolated { $0.refreshAll() }
            }
        }
    }

    /// How often listeners hear a fetch's progress.
    static let photoRefreshInterval: Duration = .milliseconds(250)

    // MARK: Checking and storing

    /// Checks received documents the way the core said: on the loop at once, off it (a catch-up), or shown first
    /// and checked in the background.
    private func check(_ documents: [UnverifiedDocument], from: PeerID, mode: PeerInstance.CheckMode) {
        trace?.routed(documents.map(\.id))
        guard let owner else {
            // The node is gone: nothing is stored, and the core hears so (the senders send them again).
            return handle(.settled(documents.map { .init($0.id, from: from, .storeFailed) }))
        }
        switch mode {
        case .inPlace:
            // A direct message for the user shows once its authenticator holds, before its envelope's checks.
            let early = owner.openBeforeCheck(documents)
            if !early.isEmpty { owner.showNow([DirectSpace.id]) }
            let (admitted, showing) = owner.check(parsed: documents)
            trace?.reached(.checked, documents.map(\.id))
            if !early.isEmpty { owner.withdrawUnchecked(early) }
            shownFirst.formUnion(showing)
            handle(Self.checked(documents, from: from, admitted))
            checkedArrivals.append((documents, from, admitted))
        case .offLoop:
            // On the runtime's shared threads (as many as the cores, whatever the number of peers), so that a
            // large catch-up is checked in parallel while the loop keeps serving sessions.
            Task.detached { [weak self, trace] in
                let (admitted, showing) = owner.check(parsed: documents)
                trace?.reached(.checked, documents.map(\.id))
                await self?.checkedOffLoop(documents, from: from, admitted, showing: showing)
            }
        case .showFirst(let forwarding):
            showFirst(documents, from: from, forwarding: forwarding, owner: owner)
        }
    }

    private func checkedOffLoop(
        _ documents: [UnverifiedDocument], from: PeerID, _ admitted: AdmittedBatch, showing: Set<ChannelID>
    ) {
        handle(Self.checked(documents, from: from, admitted))
        owner?.showNow(showing)
        keep(documents, from: from, admitted)
    }

    /// Shows the new messages among documents that came straight from their authors at once, and has their
    /// signatures checked on the node's background queue, off the way of the messages still on their way to
    /// other processes: ``shownFirstCheckDelay`` later, unless a peer waits for them (`forwarding`). When all
    /// held and no peer is to get them, the checking thread stores them itself; else the loop hears the checks
    /// (``checkedInBackground(_:from:_:shownEarly:)``).
    private func showFirst(_ documents: [UnverifiedDocument], from: PeerID, forwarding: Bool, owner: Node) {
        // Only what is certainly new shows before its check; anything the store may hold shows, if new, once
        // checked.
        let latest = owner.latestAcceptedCreated
        // Nor does anything admission will decline (a weak stamp, an author at its quota): a decline is not a
        // refusal, so nothing would stop a peer showing such documents again and again.
        let early = documents.filter {
            !owner.store.mayHold($0.id) && $0.created <= latest && owner.store.mayAdmitByStampAndQuota($0)
        }
        shownFirst.formUnion(owner.source.arriving.add(authenticated: early))
        guard !forwarding else { return checkShownFirst(documents, from: from, forwarding: true, early: early) }
        waitingChecks.append((documents, from, early))
        guard waitingChecks.count == 1 else { return }  // the timer set for the first takes these too
        waitingChecksTimer = loop.schedule(at: .now + Self.shownFirstCheckDelay) { [weak self] in
            self?.assumeIsolated { $0.startWaitingChecks() }
        }
    }

    /// How long the checks of messages shown before them wait, when no peer waits for them. A live message
    /// reaches every host of a LAN in a fraction of a millisecond, and its checks are work nothing waits for
    /// meanwhile: started at once, they would take a core from whatever else is delivering it (the other nodes
    /// of a machine that runs several, as a test LAN does, or the app reacting to the message), and the
    /// scheduler moves a waiting thread to a core only once that core has nothing else to run. The store
    /// commits a live message a few milliseconds after its checks (see `Store.insert(_:deferrable:whenVisible:)`),
    /// so it lands, and is acknowledged, this much later.
    static let shownFirstCheckDelay: Duration = .milliseconds(1)

    /// Documents shown first (`early`, those of them shown) from a peer, waiting for their checks.
    private typealias WaitingCheck = (documents: [UnverifiedDocument], from: PeerID, early: [UnverifiedDocument])

    /// Hands the checks that waited for ``shownFirstCheckDelay`` to the background queue, in arrival order;
    /// the timer does once it is due, and `stop()` before then.
    private func startWaitingChecks() {
        if let waitingChecksTimer { loop.cancel(waitingChecksTimer) }  // ignored once it ran
        let waiting = waitingChecks
        (waitingChecks, waitingChecksTimer) = ([], nil)
        for (documents, from, early) in waiting {
            checkShownFirst(documents, from: from, forwarding: false, early: early)
        }
    }

    /// Checks documents shown first (`early`: those shown) on the node's background queue.
    private func checkShownFirst(
        _ documents: [UnverifiedDocument], from: PeerID, forwarding: Bool, early: [UnverifiedDocument]
    ) {
        guard let owner else { return handle(.settled(documents.map { .init($0.id, from: from, .storeFailed) })) }
        owner.checkInBackground(documents) { [weak self, weak owner, loop, trace] checked in
            trace?.reached(.checked, documents.map(\.id))
            if let owner, let checked, !forwarding, checked.admitted.newDocumentCount == documents.count,
                early.count == documents.count
            {
                owner.keep(checked.admitted) { [weak self] results in
                    self?.assumeIsolated { $0.settle(documents, from: from, results) }
                }
                return
            }
            loop.execute { [weak self] in
                self?.assumeIsolated { $0.checkedInBackground(documents, from: from, checked, shownEarly: early) }
            }
        }
    }

    /// The background checks of ``showFirst(_:from:forwarding:owner:)`` are done (nil: the node is gone): the
    /// core hears which held, messages shown early that turned out forged (or stored already) are withdrawn,
    /// the others shown if they were not yet, and the valid new ones stored.
    private func checkedInBackground(
        _ documents: [UnverifiedDocument], from: PeerID,
        _ checked: (admitted: AdmittedBatch, showing: Set<ChannelID>)?, shownEarly: [UnverifiedDocument]
    ) {
        guard let owner, let (admitted, showing) = checked else {
            owner?.withdrawNow(shownEarly)
            return handle(.settled(documents.map { .init($0.id, from: from, .storeFailed) }))
        }
        handle(Self.checked(documents, from: from, admitted))
        let new = Set(admitted.newDocumentIDs)
        let early = Set(shownEarly.map(\.id))
        owner.withdrawNow(shownEarly.filter { !new.contains($0.id) })
        let late = Set(admitted.newDocuments.filter { !early.contains($0.id) }.compactMap(\.channel))
        owner.showNow(showing.intersection(late))
        keep(documents, from: from, admitted)
    }

    /// Shows what was checked on the loop, and the messages shown before their checks, to listeners; then
    /// queues what was checked for the store. The hub shares this loop, so it runs right here, with no task and
    /// no second thread to wake: nothing else runs on a live message's way. The price: storing a live message
    /// checked here waits for its listeners' callbacks (which should return quickly, sentence 7 of the
    /// listener contract), and so does its acknowledgement.
    private func passOnCheckedArrivals() {
        let arrivals = checkedArrivals
        let showing = shownFirst
        (checkedArrivals, shownFirst) = ([], [])
        guard !arrivals.isEmpty || !showing.isEmpty else { return }
        guard let owner else {
            for (documents, from, _) in arrivals {
                handle(.settled(documents.map { .init($0.id, from: from, .storeFailed) }))
            }
            return
        }
        owner.showNow(showing)
        for (documents, from, admitted) in arrivals { keep(documents, from: from, admitted) }
    }

    private func keep(_ documents: [UnverifiedDocument], from: PeerID, _ admitted: AdmittedBatch) {
        guard let owner else { return settle(documents, from: from, documents.map { _ in .failure(.store(.closed)) }) }
        owner.keep(admitted) { [weak self] results in
            self?.assumeIsolated { $0.settle(documents, from: from, results) }
        }
    }

    /// What the checks of a batch found, for the core.
    private static func checked(
        _ documents: [UnverifiedDocument], from: PeerID, _ admitted: AdmittedBatch
    ) -> PeerInstance.Event {
        .checked(verified: admitted.newDocumentIDs, invalid: admitted.invalidIndices.map { documents[$0].id }, from: from)
    }

    /// Tells the core how each admitted document ended.
    private func settle(
        _ documents: [UnverifiedDocument], from: PeerID, _ results: [Result<(Document, InsertOutcome), IngestError>]
    ) {
        let admissions = zip(documents, results).map { document, result in
            let outcome: PeerInstance.Admission.Outcome =
                switch result {
                case .success: .stored
                case .failure(.invalid): .invalid
                case .failure(.store): .storeFailed
                case .failure(.early), .failure(.unknownKindBudgetSpent), .failure(.weakStamp),
                    .failure(.authorQuotaReached), .failure(.expired), .failure(.directSpaceFull), .failure(.unsealed):
                    .declined
                }
            return PeerInstance.Admission(document.id, from: from, outcome)
        }
        trace?.reached(.stored, zip(documents, results).compactMap { if case .success = $1 { $0.id } else { nil } })
        fetchArrivedPhotos(results)
        handle(.settled(admissions))
    }

    /// Photos of new messages in joined channels are fetched (up to the automatic size; the rest on demand), and
    /// the sealed photos that new envelopes name.
    private func fetchArrivedPhotos(_ results: [Result<(Document, InsertOutcome), IngestError>]) {
        guard let owner else { return }
        var joined: Set<ChannelID>?
        for case .success(let (document, outcome)) in results where outcome == .stored {
            if case .profile(let profile) = document.body, let avatar = profile.avatar {
                // An avatar is fetched like a photo: only the author's current one.
                if (try? store.latestProfile(of: document.author)) == document.id {
                    owner.photoArrived(avatar, by: document.author)
                }
                continue
            }
            if case .sealed(let sealed) = document.body, let photo = sealed.photo {
                owner.fetchSpacePhoto(photo)
                continue
            }
            guard case .message(let message) = document.body, case .photo(let hash) = message.content else { continue }
            if joined == nil { joined = Set(joinedChannels()) }
            if joined?.contains(message.channel) == true { owner.photoArrived(hash, by: document.author) }
        }
    }

    // MARK: Translations

    /// The channels this node carries: those its user joined, and the direct-message space, which every node
    /// carries for everyone (PROTOCOL.md §1.8).
    private func joinedChannels() -> [ChannelID] {
        ((try? store.joinedChannels()) ?? []).union([DirectSpace.id]).sorted()
    }

    private static func event(_ report: DNSServiceDiscovery.Report) -> DiscoveryDirectory.Event {
        switch report {
        case .resolved(let instance, let host, let port, let txt):
            .resolved(instance: instance, host: host, port: port, txt: txt)
        case .unresolvable(let instance, let host): .unresolvable(instance: instance, host: host)
        case .lost(let instance): .lost(instance: instance)
        case .unavailable(let reason): .daemonUnavailable(reason: reason)
        case .available: .daemonAvailable
        case .tooManyToResolve: .tooManyToResolve
        }
    }
}

extension PeerInfo {
    init(_ summary: LinkSummary) {
        self.init(
            identity: summary.peer, address: "\(summary.address)", isOutbound: summary.isOutbound,
            refused: summary.refused, rateLimited: summary.rateLimited, datagramsDropped: summary.datagramsDropped)
    }
}

extension PeerEvent {
    init(_ notice: PeerNotice) {
        switch notice {
        case .joined(let summary): self = .joined(PeerInfo(summary))
        case .left(let summary, let reason): self = .left(PeerInfo(summary), reason: reason)
        case .refused(let address, let reason): self = .refused(address: "\(address)", reason: reason)
        case .refusedRepeatedly(let host, let count, let reason):
            self = .refusedRepeatedly(host: host, count: count, reason: reason)
        case .discovery(let line): self = .discovery(line)
        }
    }
}
