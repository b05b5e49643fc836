import DongneNet
package import DongneStore
import Foundation
import Synchronization
package import DongneSystem

/// A dongne node: one identity, one store, the listeners of its user.
///
/// Start one per data directory. Every write a program or person makes goes through it: it signs the document
/// with the node's identity, stores it durably, and shows it to local listeners before the call returns.
public final class Node: Sendable {
    /// The configuration the node started with.
    public let configuration: Configuration
    /// The node's local store. Programs go through the node, whose writes reach listeners; the store is for
    /// the library itself and its tests.
    package let store: Store
    /// The key that signs everything this node's user writes, with its current stamp.
    package var identity: SigningKey { stampedIdentity.current }
    private let stampedIdentity: StampedIdentity
    let hub: ListenerHub
    /// The thread the network and the listener hub run on, one at a time, and listeners' callbacks with them.
    let loop: EventLoop

    /// The node's loop, for the servers of this package that run beside the network on its thread (the local API).
    package var eventLoop: EventLoop { loop }
    /// Where the signatures of messages shown already (received straight from their authors) are checked.
    let background = BackgroundQueue(name: "dongne-checks")
    /// The one-time keys of this node's envelopes, stamped ahead of need.
    let envelopeKeys: EnvelopeKeys
    /// Finds the user's direct messages among the stored envelopes.
    let inbox: DirectInbox
    /// Whether receipts are being sent, and whether more were asked for meanwhile: one run at a time, so that
    /// two never send one receipt twice.
    let receiptsInFlight = Mutex<(running: Bool, again: Bool)>((false, false))
    let source: SnapshotSource
    /// What this node holds of each photo.
    let photos: PhotoLibrary
    /// Where the node is (see ``whereabouts``).
    let whereaboutsShell: NodeWhereabouts
    /// The current display name, readable from any thread.
    private let profile: Locked<String>
    let clock: MonotonicClock
    /// Set once ``stop()`` begins: periodic work ends.
    private let stopping = Locked(false)
    /// Whether ``stop()`` was called: timers that come afterwards do nothing.
    var isStopping: Bool { stopping.get() }
    let network: LockedNetwork
    /// Makes the data directory this node's alone while it runs.
    private let directoryLock: DataDirectoryLock

    /// Where the node accepts peers (`host:port`), if it listens.
    public var listeningAddress: String? { network.address }

    /// The public key of this node's user: who they are, whatever their display name.
    public var publicKey: PublicKey { identity.publicKey }
    /// Where the identity key is kept.
    public var identityPath: String { configuration.dataDirectory + "/" + IdentityFile.fileName }
    /// Where the store's database file is.
    public var storePath: String { store.path }
    /// The name shown beside this user's messages.
    public var displayName: String { profile.get() }

    /// When this node was made, during ``start(_:)``: what its uptime counts from.
    public let startedAt = ContinuousClock.now

    private init(
        configuration: Configuration, identity: StampedIdentity, store: Store, loop: EventLoop, directoryLock: DataDirectoryLock
    ) {
        self.directoryLock = directoryLock
        self.network = LockedNetwork()
        self.loop = loop
        self.configuration = configuration
        self.stampedIdentity = identity
        self.store = store
        whereaboutsShell = NodeWhereabouts(
            store: store, usesGPS: configuration.gpsd != nil, defaultRule: configuration.postingRule,
            now: NodeClock.system.now)
        self.profile = Locked(configuration.displayName)
        self.clock = MonotonicClock(configuration.clock)
        let policy = ModerationPolicy(reportThreshold: max(1, configuration.reportThreshold))
        photos = PhotoLibrary(store: store)
        source = SnapshotSource(store: store, viewer: identity.current.publicKey, policy: policy, photos: photos)
        hub = ListenerHub(source: source, loop: loop)
        let directKey = DirectMessageKey(identity.current)
        envelopeKeys = EnvelopeKeys(
            key: directKey,
            strength: DirectSpace.envelopeStampStrength(required: configuration.admission.requiredStampStrength),
            queue: background)
        let receiptsSetting = configuration.sendsReadReceipts
        inbox = DirectInbox(
            key: directKey, store: store, queue: background, arriving: source.arrivingDirect,
            sendsReceipts: { [store] in Node.sendsReadReceipts(in: store, default: receiptsSetting) })
    }

    /// Starts a node: creates the data directory if needed, loads (or makes) the identity, opens the store, and
    /// publishes a profile when the display name is new.
    public static func start(_ configuration: Configuration) async throws -> Node {
        let directory = configuration.dataDirectory
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError.file(
                path: directory, reason: "cannot create the data directory: \(error.localizedDescription)")
        }
        var gpsd: SocketAddress?
        if let address = configuration.gpsd {
            guard let parsed = SocketAddress(address) else { throw DongneError.invalidAddress(address) }
            gpsd = parsed
        }
        if let location = configuration.location {
            do { try location.validate() } catch { throw DongneError.invalidDocument(error) }
        }
        let lock = try DataDirectoryLock(directory: directory)
        let key = try IdentityFile.loadOrCreate(at: directory + "/" + IdentityFile.fileName)
        // The system's clock, not the configured one: standing is when posts reached this machine, and a test's
        // stepping clock (which moves at every reading) must move only for the documents it signs.
        let standing = ReporterStanding(age: configuration.reporterStandingAge, clock: NodeClock.system.now)
        let store = try Store(
            path: directory + "/dongne.sqlite", deferredCommitDelay: configuration.deferredCommitDelay,
            reporterStanding: standing, admission: configuration.admission,
            envelopeClock: configuration.envelopeClock.now)
        let identity: StampedIdentity
        do { identity = try await StampedIdentity.load(key, policy: configuration.admission, store: store) } catch {
            store.close()
            throw error
        }
        let loop: EventLoop
        do { loop = try EventLoop(name: "dongne-net") } catch {
            store.close()
            throw DongneError.networkUnavailable("cannot start the network's thread: \(error)")
        }
        // The borders are read now, beside the start rather than in its way (they are a fifth of a cold start's
        // work, and a node without a position may never need them), and not at the first position on the
        // network's thread: one that comes meanwhile waits for this reading to end.
        Task.detached(priority: .utility) { _ = RegionMap.shipped }
        let node = Node(
            configuration: configuration, identity: identity, store: store, loop: loop, directoryLock: lock)
        if let location = configuration.location { try await node.setLocation(location) }
        // A new name, or no profile of this node's stored (a store from before profiles were offered to peers).
        if try store.setting(Self.displayNameSetting) != Array(configuration.displayName.utf8)
            || store.latestProfile(of: node.publicKey) == nil
        {
            try await node.setDisplayName(configuration.displayName)
        }
        await node.inbox.catchUp()  // envelopes stored before a stop and not tried yet, before any expires
        await node.expireEnvelopes()
        try await node.startNetwork()
        await node.recountMaturedReports()
        node.envelopeKeys.refill()
        try? await node.sendReceiptsDue()  // those owed before a crash
        // Last, when nothing can throw any more: a start that fails leaves no gpsd connection behind.
        if let gpsd { node.whereaboutsShell.startGPS(at: gpsd, on: loop) }
        return node
    }

    /// Reporters gain standing with time, not with a write: every ``ModerationPolicy/standingRecountInterval``
    /// the reports of those whose standing came meanwhile are counted, and listeners see what that hides.
    private func recountMaturedReports() async {
        if (try? await store.recountMaturedReports()) == true { await hub.refreshAll() }
        let next = ContinuousClock.now + .milliseconds(ModerationPolicy.standingRecountInterval)
        _ = loop.schedule(at: next) { [weak self] in
            guard let self, !self.stopping.get() else { return }
            Task { await self.recountMaturedReports() }
        }
    }

    /// Starts the network: listening if a port is configured, and dialling the configured peers. Without
    /// either the node still dials when asked (``connect(to:)``); it opens no socket until then.
    private func startNetwork() async throws {
        guard let networkKey = NetworkKey(passphrase: configuration.networkPassphrase) else {
            throw DongneError.networkUnavailable("cannot derive the network key (not enough memory)")
        }
        let network = PeerNetwork(node: self, networkKey: networkKey)
        self.network.set(network)
        var listening: SocketAddress?
        if let port = configuration.listenPort {
            let host = configuration.listenAddress
            do { listening = try await network.listen(host: host, port: port) } catch {
                throw DongneError.networkUnavailable("cannot listen on \(host) port \(port): \(error)")
            }
            self.network.setAddress("\(listening!)")
        }
        // Advertised only when listening; a node that does not listen still finds and dials the others.
        await network.begin()
        await resumePhotoFetches()
        resumeSpacePhotos()
        await openDirectPhotos()
        if configuration.discovery { await network.startDiscovery(port: listening?.port) }
        // Configured peers, dialled and kept; one that does not answer is dialled again later. Those met before
        // are spares of the partial views (or, without them, dialled and kept too).
        for peer in configuration.peers { try? await connect(to: peer) }
        let remembered = (try? store.knownPeers()) ?? []
        for peer in remembered where !configuration.peers.contains(peer) {
            if let address = SocketAddress(peer) { await network.consider(address) }
        }
    }

    /// Says goodbye to peers, finishes pending writes and closes the store.
    public func stop() async {
        stopping.set(true)
        stampedIdentity.stop()
        envelopeKeys.stop()
        whereaboutsShell.stop()
        await network.get()?.stop()
        store.close()
        directoryLock.release()
    }

    // MARK: Peers

    /// Connects to a peer at `HOST:PORT` (a dotted quad or `localhost`) and starts a session with it.
    public func connect(to address: String) async throws {
        guard let socketAddress = SocketAddress(address) else { throw DongneError.invalidAddress(address) }
        guard let network = network.get() else { throw DongneError.networkUnavailable("the network is off") }
        do { try await network.connect(to: socketAddress) } catch {
            throw DongneError.networkUnavailable("cannot connect to \(address): \(error)")
        }
    }

    /// Bytes this node has written to and read from its peers (for benchmarks and status).
    public func networkTraffic() async -> (sent: Int, received: Int) {
        await network.get()?.traffic() ?? (0, 0)
    }

    /// Batches of documents this node sent again because a peer's acknowledgement came late (or never), and
    /// the documents in them, since it started: on a healthy network nearly none.
    public func gossipResends() async -> (batches: Int, documents: Int) {
        await network.get()?.resends() ?? (0, 0)
    }

    /// The peers this node is joined with: those a peer-joined notice announced and no peer-left notice ended.
    /// With partial views, these are its neighbours and the peers that keep no views; sessions opened for a few
    /// membership messages, which come and go within seconds, are not among them.
    public func peers() async -> [PeerInfo] {
        await network.get()?.peers() ?? []
    }

    /// Peers joining and leaving, as they happen (an empty sequence when the network is off).
    public var peerEvents: AsyncStream<PeerEvent> {
        network.get()?.peerEvents ?? AsyncStream { $0.finish() }
    }

    /// A channel was reconciled with a peer: its snapshots are no longer only from this node's cache. From the
    /// node's loop, where the hub runs.
    func reconciledNow(_ channel: ChannelID) {
        hub.assumeIsolated { $0.markReconciled(channel) }
    }

    /// Peers stored these documents: local writes among them are no longer pending. Most acknowledgements
    /// are of documents that were never pending here (others', or acknowledged by another peer already): those
    /// are told apart at once, and only the rest start a task to write.
    func acknowledged(_ ids: [DocumentID]) {
        let pending = store.takePendingWrites(among: ids)
        guard !pending.isEmpty else { return }
        Task { await clearPending(pending) }
    }

    private func clearPending(_ pending: [DocumentID]) async {
        guard let cleared = try? await store.clearPending(pending), !cleared.isEmpty else { return }
        let channels = Set(((try? store.documents(cleared)) ?? [:]).values.compactMap(\.channel))
        await hub.refresh(channels: channels)
        if channels.contains(DirectSpace.id) { await hub.refreshDirect() }
    }

    // MARK: Channels

    /// The channel with this name (normalised: NFC, no surrounding white space). Nothing is written: like a
    /// Firestore collection reference, a channel exists as soon as someone posts in it.
    public func channel(named name: String) throws -> Channel {
        do { return Channel(node: self, name: try ChannelName(normalizing: name)) } catch {
            throw DongneError.invalidDocument(error)
        }
    }

    /// Joins a channel: it appears in the channel list as joined.
    @discardableResult
    public func join(_ name: String) async throws -> Channel {
        let channel = try channel(named: name)
        try await store.join(channel.name, at: configuration.clock.now())
        await hub.refresh(channels: [channel.id])
        await network.get()?.announceChannels()
        return channel
    }

    /// Leaves a channel: it stays in the list only if a `channel` document names it. Its messages stay stored.
    public func leave(_ channel: Channel) async throws {
        try await store.leave(channel.id)
        await hub.forgetReconciled(channel.id)
        await hub.refresh(channels: [channel.id])
        await network.get()?.announceChannels()
    }

    /// The channels this node knows, as a query with the same listener semantics as messages.
    public var channels: ChannelListQuery { ChannelListQuery(node: self) }

    // MARK: People

    /// Blocks an author: their messages disappear from every listener at once and their reports stop counting.
    /// Local and private; nothing is sent.
    public func block(_ author: PublicKey) async throws {
        do { try await store.block(author, since: configuration.clock.now()) } catch {
            await hub.refreshAll()  // what the listeners show may have moved with the attempt
            throw error
        }
        await hub.refreshAll()
    }

    /// Lifts a block: the author's messages come back to every listener as `added`.
    public func unblock(_ author: PublicKey) async throws {
        do { try await store.unblock(author) } catch {
            await hub.refreshAll()  // what the listeners show may have moved with the attempt
            throw error
        }
        await hub.refreshAll()
    }

    /// The authors this user blocked.
    public func blockedAuthors() throws -> Set<PublicKey> {
        try store.blockedAuthors()
    }

    /// Every author this node has a name for (from their messages and profiles), with that name.
    public func knownAuthors() throws -> [PublicKey: String] {
        // A message shows before its commit, and a person goes by the name they see on it at once, unless the
        // store has a later one (a profile, or an older message that arrived late).
        try store.datedAuthorNames().merging(source.arriving.latestNames()) { stored, shown in
            shown.created >= stored.created ? shown : stored
        }.mapValues(\.name)
    }

    /// Sets the name shown beside this user's messages and publishes it in a `profile` document.
    public func setDisplayName(_ name: String) async throws {
        let avatar = try? store.avatars()[publicKey]  // a new name keeps the avatar
        _ = try await publish(.profile(Profile(displayName: name, avatar: avatar)))
        try await store.setSetting(Self.displayNameSetting, to: Array(name.utf8))
        profile.set(name)
    }

    // MARK: Writing

    /// `body` signed with the user's key, whose stamp lets peers store it (see ``StampedIdentity``).
    func sign(_ body: DocumentBody) async throws -> Document {
        let key = identity
        let document: Document
        do { document = try Document.sign(body, created: clock.next(), by: key) } catch {
            throw DongneError.invalidDocument(error)
        }
        guard !stampedIdentity.allows(document.bytes.count, in: document.channel, signedBy: key) else {
            return document
        }
        // Rare: the user's posts in this channel outgrew their stamp before a stronger one was found.
        await stampedIdentity.strengthen(toAllow: document.bytes.count, in: document.channel)
        do { return try Document.sign(body, created: clock.next(), by: identity) } catch {
            throw DongneError.invalidDocument(error)
        }
    }

    /// Signs `body`, stores it as a pending local write, and shows it to local listeners, all before returning.
    ///
    /// Peers get it first: it is sent as soon as it is queued for the store, so the local disk is never on a
    /// message's way to other people. A message then shows to local listeners at once, from memory (as a pending
    /// write, see ``ArrivingMessages``), and its commit may wait a few milliseconds (see
    /// `Store.insert(_:deferrable:whenVisible:)`); any other document shows once committed. The call returns
    /// once it is on disk. Should the store fail, the message disappears from listeners again and the call
    /// throws; peers that already took the document give it back at the next reconciliation.
    func publish(_ body: DocumentBody) async throws -> Document {
        let document = try await sign(body)
        let shownAtOnce = source.arriving.addLocal(document)
        let committed = Promise<Bool>()
        let durable = Promise<Result<[InsertOutcome], StoreError>>()
        // Queued before it is sent, so that no acknowledgement can overtake its pending state. Neither queueing
        // nor awaiting starts a task: nothing wakes a second thread while the message is on its way.
        store.submitLocal([document], deferrable: !shownAtOnce.isEmpty, whenVisible: { [source] in
            source.arriving.remove([document])
            committed.fulfill(true)
        }) {
            committed.fulfill(false)  // no-op when it was committed
            durable.fulfill($0)
        }
        // Sent to peers first, then shown to local listeners: by this thread, as the loop's work, when the loop
        // is free (no thread to wake on a message's way out), else by the loop.
        if let network = network.get() {
            let sent = loop.runIfFree { () -> Bool in
                network.assumeIsolated { $0.published(document, showing: shownAtOnce) }
                return true
            }
            if sent == nil { await network.published(document, showing: shownAtOnce) }
        } else if !shownAtOnce.isEmpty {
            await hub.showArriving(channels: shownAtOnce)
        }
        // Both awaited to their end even if the caller was cancelled meanwhile (a promise is not cancelled with
        // its awaiting task), so that listeners and the store agree.
        if await committed.value {
            await hub.committed([document])
        } else {
            // Not stored: reconciliation must not offer it from memory either.
            await network.get()?.forgetPublished(document.id)
            if !shownAtOnce.isEmpty {
                source.arriving.remove([document])
                await hub.refresh(channels: shownAtOnce)
            }
        }
        _ = try await durable.value.get()
        return document
    }

    /// Takes documents that arrived from elsewhere (a peer, a file): checks them, shows the new messages to local
    /// listeners as soon as their signatures hold, and stores the new documents durably before returning. One
    /// result per input, in order. `verified` hears the ids of the new, valid ones once they are shown, before
    /// they are stored (to forward them at once).
    package func receive(
        _ documents: [[UInt8]], verified: @Sendable ([DocumentID]) async -> Void = { _ in }
    ) async -> [Result<(Document, InsertOutcome), IngestError>] {
        let (checked, showing) = check(store.admit(documents, latestCreated: latestAcceptedCreated))
        await show(showing)
        if checked.newDocumentCount > 0 { await verified(checked.newDocumentIDs) }
        return await keep(checked)
    }

    /// Checks received documents in the calling thread (the signatures are most of the cost) and holds the new
    /// messages for listeners (see ``ArrivingMessages``): the first half of ``receive(_:verified:)``, for a
    /// caller that forwards them itself, then passes the channels returned to ``show(_:)`` and the batch to
    /// ``keep(_:)``.
    package func check(parsed documents: [UnverifiedDocument]) -> (AdmittedBatch, showing: Set<ChannelID>) {
        check(store.admit(parsed: documents, latestCreated: latestAcceptedCreated))
    }

    /// The latest `created` time a received document may have now: ``DocumentLimits/maximumClockSkew`` past the
    /// system's clock (not the configured one: a test's stepping clock moves at every reading, and must move only
    /// for the documents this node signs).
    package var latestAcceptedCreated: UInt64 {
        NodeClock.system.now() &+ DocumentLimits.maximumClockSkew
    }

    private func check(_ admitted: AdmittedBatch) -> (AdmittedBatch, showing: Set<ChannelID>) {
        var showing = source.arriving.add(admitted.newDocuments, except: identity.publicKey)
        let envelopes = admitted.newDocuments.filter { $0.channel == DirectSpace.id }
        if !envelopes.isEmpty, inbox.openOnArrival(envelopes) { showing.insert(DirectSpace.id) }
        return (admitted, showing)
    }

    /// Shows the messages ``check(parsed:)`` held in these channels to their listeners.
    package func show(_ channels: Set<ChannelID>) async {
        if !channels.isEmpty { await hub.showArriving(channels: channels) }
    }

    /// Checks received documents as ``check(parsed:)`` does, on the node's background queue, and hands the
    /// result to `completion` there (nil when the node is gone by then).
    func checkInBackground(
        _ documents: [UnverifiedDocument],
        completion: @escaping @Sendable ((admitted: AdmittedBatch, showing: Set<ChannelID>)?) -> Void
    ) {
        background.execute { [weak self] in completion(self?.check(parsed: documents)) }
    }

    /// Withdraws messages held before their signatures were checked (see `ArrivingMessages.add(authenticated:)`)
    /// and refreshes their listeners: from the node's loop, where the hub runs.
    func withdrawNow(_ documents: [UnverifiedDocument]) {
        let channels = source.arriving.remove(unverified: documents)
        if !channels.isEmpty { hub.assumeIsolated { $0.refresh(channels: channels) } }
    }

    /// ``show(_:)`` from the node's loop (the network's code, or a datagram's handler), where the hub runs:
    /// at once, with no hop.
    func showNow(_ channels: Set<ChannelID>) {
        if !channels.isEmpty { hub.assumeIsolated { $0.showArriving(channels: channels) } }
    }

    private static let displayNameSetting = "displayName"
}

/// The times of the documents a node signs: its clock, but never the same millisecond twice or backwards, so
/// that its own writes keep the order they were made in (positions tie-break by random id otherwise).
final class MonotonicClock: Sendable {
    private let clock: NodeClock
    private let last = Mutex<UInt64>(0)

    init(_ clock: NodeClock) { self.clock = clock }

    func next() -> UInt64 {
        let now = clock.now()
        return last.withLock { last in
            last = max(now, last + 1)
            return last
        }
    }
}

/// The node's network, once started, and where it listens.
final class LockedNetwork: Sendable {
    private let state = Mutex<(network: PeerNetwork?, listening: String?)>((nil, nil))

    func get() -> PeerNetwork? { state.withLock { $0.network } }
    func set(_ network: PeerNetwork) { state.withLock { $0.network = network } }
    var address: String? { state.withLock { $0.listening } }
    func setAddress(_ address: String) { state.withLock { $0.listening = address } }
}
