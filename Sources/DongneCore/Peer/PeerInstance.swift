/// A node's peers, as a pure value: every rule between its connections and its protocol cores, with events in
/// and directives out, and the time passed in with every event.
///
/// It embeds the gossip of documents (``GossipInstance``), their reconciliation (``ReconciliationInstance``)
/// and what DNS-SD found (``DiscoveryDirectory``), and owns what lies between them: the table of links, one
/// session per peer, dialling and redialling, keepalive and liveness, rate limits, refusals and bans, datagram
/// routes, when a received message may show before its signature is checked, and the anti-entropy rounds. It
/// reads no clock, draws from the generator it was given, and does no I/O: the shell (`PeerNetwork`) turns
/// sockets, timers and store reads into ``Event``s and carries out the ``Directive``s, in order.
///
/// Sessions themselves (the Noise handshake and transport) are ``SecureSession``s the shell keeps beside each
/// connection: the core sees a connection open, its peer's identity proved, the plaintext of each message, and
/// the connection end.
public struct PeerInstance: Sendable {
    /// Something that happened, as the shell saw it.
    public enum Event: Sendable, Equatable {
        /// A connection is open: accepted (`dialled` nil) or dialled to `dialled`. Its session is starting.
        case opened(PeerID, remote: PeerAddress, dialled: PeerAddress?)
        /// A dial to this address failed.
        case dialFailed(PeerAddress)
        /// The session's handshake proved the peer's identity; the session's handshake hash names it.
        case established(PeerID, peer: PublicKey, handshakeHash: [UInt8])
        /// A message arrived over the session (its plaintext).
        case message(PeerID, [UInt8])
        /// Bytes arrived that carried no message yet (a handshake message, or part of a frame): the peer is
        /// there, as far as the silence limit goes.
        case heard(PeerID)
        /// The connection ended (the peer closed it, said goodbye, or broke the session), and why.
        case closed(PeerID, reason: String)
        /// A UDP datagram arrived on the node's datagram socket.
        case datagram([UInt8])
        /// The system refused to send these datagrams: their batches go over the sessions instead.
        case datagramsRefused([OutgoingDatagram])
        /// The node takes datagrams on this UDP port.
        case datagramPort(UInt16)
        /// The node takes sessions on this TCP port: it keeps partial views from now on (PROTOCOL.md §2.9),
        /// unless ``Settings/partialView`` is nil.
        case listening(port: UInt16)
        /// An address where a peer was reached before: a spare of the partial views (dialled like
        /// ``connect(_:)`` without them).
        case known(PeerAddress)
        /// The user asked to stay connected to this address.
        case connect(PeerAddress)
        /// Stop dialling this address (a membership layer dropped it); a session with it goes on until the shell
        /// ends it.
        case forget(PeerAddress)
        /// This node advertises itself under this DNS-SD instance name (which it never dials).
        case advertised(instance: String)
        /// DNS-SD reported something.
        case discovered(DiscoveryDirectory.Event)
        /// This node wrote a document (queued for its store).
        case published(GossipDocument, channel: ChannelID?)
        /// A document of this node's own to send by one random peer that carries `channel` first (an envelope of
        /// the direct-message space): that peer spreads it. `photo` is the sealed photo the envelope names, served
        /// at first to that peer alone.
        case stem(GossipDocument, channel: ChannelID, photo: BlobHash? = nil)
        /// The sealed photo of one of this node's own envelopes, a moment after its stem: asked of every peer that
        /// carries the space, as each relay asks for it, so that never asking does not mark the writer.
        case askForOwnPhoto(BlobHash)
        /// A document this node wrote did not commit: a copy a peer sends back is to be stored.
        case unpublished(DocumentID)
        /// This node's latest profile (at start, and whenever the user writes a new one): every peer gets it,
        /// once per session (PROTOCOL.md §2.4, *Profiles*).
        case ownProfile(GossipDocument)
        /// The channels this node carries (at start, and whenever the user joins or leaves one).
        case joinedChanged([ChannelID])
        /// The items of a channel that a ``Directive/loadItems(_:for:answering:)`` asked for.
        case itemsLoaded(ChannelID, for: PeerID, answering: [UInt8]?, items: [NegentropyItem])
        /// The stored documents that a ``Directive/loadDocuments(_:for:)`` or a
        /// ``Directive/loadPendingWrites(in:limit:for:)`` asked for (those found).
        case documentsLoaded([GossipDocument], for: PeerID)
        /// Documents a ``Directive/check(_:from:mode:)`` asked for were checked: `verified` are valid and new
        /// (they may be forwarded), `invalid` break a rule (a signature that fails, say).
        case checked(verified: [DocumentID], invalid: [DocumentID], from: PeerID)
        /// Documents a ``Directive/check(_:from:mode:)`` asked for are done: stored, refused, or not stored.
        case settled([Admission])
        /// Fetch this blob from peers (its manifest if stored, and the chunks stored), unless already fetching;
        /// only its manifest when it is larger than `sizeLimit` bytes.
        case fetchBlob(BlobHash, manifest: BlobManifest?, held: [Int], sizeLimit: Int = .max)
        /// Stop fetching this blob.
        case cancelBlobFetch(BlobHash)
        /// A chunk a ``Directive/storeBlobChunk(_:index:bytes:)`` handed over is stored, or failed to be.
        case blobChunkStored(BlobHash, index: Int, success: Bool)
        /// What a ``Directive/readBlob(_:for:)`` read from the store: the messages answering the peer. Nil when
        /// the shell would not read (the peer's connection has too much unsent): the request is over budget.
        case blobRead([GossipMessage]?, for: PeerID)
        /// The time a ``Directive/wake(at:)`` asked for has come (or any later one).
        case timer
        /// The node is stopping: say goodbye to every peer, and dial no more.
        case stop
    }

    /// What the shell must do, in order.
    public enum Directive: Sendable, Equatable {
        /// Send a message to a peer over its session.
        case send(GossipMessage, to: PeerID)
        /// Send these sealed datagrams, all at once; answer ``Event/datagramsRefused(_:)`` with those the
        /// system refused.
        case sendDatagrams([OutgoingDatagram])
        /// Close the connection now (the core has forgotten it).
        case close(PeerID, reason: String)
        /// Say goodbye over the session, then close the connection once what is queued is written (the core has
        /// forgotten it).
        case sayGoodbye(PeerID)
        /// Open a connection to this address; answer ``Event/opened(_:remote:dialled:)`` or
        /// ``Event/dialFailed(_:)``.
        case dial(PeerAddress)
        /// Check these received documents, in the way `mode` says; answer ``Event/checked(verified:invalid:from:)``
        /// (unless the mode says it may be skipped) and ``Event/settled(_:)``.
        case check([UnverifiedDocument], from: PeerID, mode: CheckMode)
        /// Read a channel's reconciliation items from the store; answer ``Event/itemsLoaded(_:for:answering:items:)``.
        case loadItems(ChannelID, for: PeerID, answering: [UInt8]?)
        /// Read these documents from the store; answer ``Event/documentsLoaded(_:for:)``.
        case loadDocuments([DocumentID], for: PeerID)
        /// Read this node's own writes in these channels that no peer has acknowledged yet, at most `limit`, the
        /// newest; answer ``Event/documentsLoaded(_:for:)`` (oldest first).
        case loadPendingWrites(in: [ChannelID], limit: Int, for: PeerID)
        /// A peer stored these documents (the node's own writes among them are no longer pending).
        case acknowledged([DocumentID])
        /// A peer handed over everything it had of this channel.
        case reconciled(ChannelID)
        /// Remember this address, where a peer was reached, for the next start.
        case remember(PeerAddress)
        /// Tell the user.
        case notify(PeerNotice)
        /// Answer a peer's `blob want` or `chunk request` from the store; answer ``Event/blobRead(_:for:)``.
        case readBlob(GossipMessage, for: PeerID)
        /// Keep a fetched manifest (checked against its name).
        case storeBlobManifest(BlobManifest)
        /// Keep a fetched chunk (checked against its name); answer ``Event/blobChunkStored(_:index:success:)``.
        case storeBlobChunk(BlobHash, index: Int, bytes: [UInt8])
        /// A fetch holds this many of a blob's chunks.
        case blobProgress(BlobHash, held: Int, of: Int)
        /// A fetch holds every chunk of the blob.
        case blobCompleted(BlobHash)
        /// A fetch stopped at the manifest: the blob is larger than its size limit.
        case blobHeldBack(BlobHash)
        /// A fetch gave up: no peer brought anything of the blob for a while.
        case blobAbandoned(BlobHash)
        /// Deliver ``Event/timer`` at this time (replaces any earlier request).
        case wake(at: UInt64)
    }

    /// How the shell checks a batch of received documents.
    public enum CheckMode: Sendable, Equatable {
        /// They came straight from their author over an authenticated session: show the new messages at once
        /// and check the signatures off the loop. When all hold and `forwarding` is false (no peer would get
        /// them), the checking thread may store them itself and answer only ``Event/settled(_:)``.
        case showFirst(forwarding: Bool)
        /// A few: check them at once, on the loop, before anything else.
        case inPlace
        /// Many (a catch-up): check them off the loop, so that the loop keeps serving sessions.
        case offLoop
    }

    /// How a received document ended.
    public struct Admission: Sendable, Equatable {
        /// The outcome.
        public enum Outcome: Sendable, Equatable {
            /// Stored (or stored already).
            case stored
            /// It breaks a rule (a signature that fails, say): refused, and counted against its sender.
            case invalid
            /// The store failed (its disk is full, say): its sender sends it again later.
            case storeFailed
            /// Not accepted now, and not held against its sender: dated too far ahead of this node's clock
            /// (``DocumentLimits/maximumClockSkew``), or of an unknown kind beyond the budget for those. It is
            /// acknowledged, not forwarded, and acceptable later (reconciliation offers it again).
            case declined
        }

        /// The document.
        public let id: DocumentID
        /// The session it came over.
        public let from: PeerID
        /// How it ended.
        public let outcome: Outcome

        /// An admission's end.
        public init(_ id: DocumentID, from: PeerID, _ outcome: Outcome) {
            self.id = id
            self.from = from
            self.outcome = outcome
        }
    }

    /// The knobs, in milliseconds and counts; `Protocol/PROTOCOL.md` §2.6 lists the defaults.
    public struct Settings: Sendable, Equatable {
        /// Invalid documents after which a session ends and its identity is ignored for ``banDuration``.
        public var refusalLimit = 100
        public var banDuration: UInt64 = 600_000
        /// Documents a peer may send at once, and per second over time: above what a core can verify, so that
        /// an honest catch-up is never slowed, yet bounded.
        public var burst = 30_000.0
        public var documentsPerSecond = 30_000.0
        /// Documents from one peer that may wait for their checks at once: beyond it, batches are dropped
        /// unacknowledged (their sender sends them again). A sender's full window (32 batches of 256) fits.
        public var maximumAdmitting = 10_000
        /// Documents of one session shown before their checks and not done yet, at most.
        public var maximumShownUnchecked = 32
        /// The stamp strength the node asks of every author (PROTOCOL.md §1.13): a document with a weaker stamp
        /// is never shown before its checks, since they will decline it.
        public var requiredStampStrength = 0
        /// Batches of at most this many documents are checked at once on the loop (a live chat); larger ones
        /// off it.
        public var documentsCheckedInPlace = 4
        /// Messages of unknown types a session may carry (PROTOCOL.md §2.4): far more than a later version sends.
        public var unknownMessageLimit = 10_000
        /// Every session sends something at least this often; one silent for longer than ``silenceLimit`` ends.
        public var keepaliveInterval: UInt64 = 2_000
        public var silenceLimit: UInt64 = 6_000
        /// How often sessions are looked at for keepalive and silence.
        public var livenessCheckInterval: UInt64 = 1_000
        /// How often each joined channel is reconciled with one random peer that carries it.
        public var antiEntropyInterval: UInt64 = 30_000
        /// After a session that carried gossip ends, the next round comes this soon instead (what was pushed to
        /// the node over it has reached other peers by then), but never sooner than ``repairSpacing`` after the
        /// previous round: sessions that come and go cannot make the node reconcile without pause.
        public var repairDelay: UInt64 = 1_000
        public var repairSpacing: UInt64 = 5_000
        /// The pause before dialling a lost address again: the first, doubling up to the longest. Short, for a
        /// LAN: after a partition heals, a session comes back within one pause and a dial.
        public var firstRedialPause: UInt64 = 1_000
        public var longestRedialPause: UInt64 = 4_000
        /// Connections whose handshake is not done yet, in all and from one host: a new connection beyond either
        /// closes as it opens, before any handshake work.
        public var maximumHandshaking = 32
        public var maximumHandshakingPerHost = 8
        /// Sessions other hosts opened, in all and from one host: a session beyond either closes once its peer is
        /// known. (Sessions this node dialled are its own choice and do not count.)
        public var maximumSessions = 256
        public var maximumSessionsPerHost = 8
        /// A connection whose handshake is not done this long after it opened closes, however its bytes trickle.
        public var handshakeDeadline: UInt64 = 10_000
        /// New connections a host may open at once, and per second over time; one that ends before its
        /// handshake is done costs ``failedHandshakeCost`` more.
        public var hostConnectionBurst = 16.0
        public var hostConnectionsPerSecond = 2.0
        public var failedHandshakeCost = 4
        /// A host's refusals (invalid documents, malformed messages, failed handshakes) are forgiven at this rate;
        /// a host with ``refusalLimit`` unforgiven refusals is ignored for ``banDuration``, whatever keys it uses.
        public var hostRefusalsForgivenPerSecond = 1.0
        /// What a malformed message or reconciliation costs its host, in refusals.
        public var malformedCost = 10
        /// `reconcile` messages from initiators (each makes this node load a channel's items) a host may send at
        /// once and per second; `request`s likewise. Beyond, they are ignored and counted.
        public var hostReconcileBurst = 64.0
        public var hostReconcilesPerSecond = 4.0
        public var hostRequestBurst = 16.0
        public var hostRequestsPerSecond = 4.0
        /// `channels` lists that newly share a channel with this node (each starts its reconciliation, which loads
        /// the channel's items, and a read of pending writes) a host may send at once and per second, as many as
        /// `reconcile`s: a peer sends one as its session starts and one per join. Beyond, they are ignored and
        /// counted; lists that share nothing new cost nothing.
        public var hostChannelListBurst = 64.0
        public var hostChannelListsPerSecond = 4.0
        /// Chunks a host may ask this node to read and send (a `blob want` counts as one), at once and per second:
        /// a whole blob at once, then about 96 MiB/s. Beyond, requests are ignored and counted.
        public var hostChunkBurst = 2_048.0
        public var hostChunksPerSecond = 2_048.0
        /// A request is ignored while the session has this many documents or more unacknowledged (queued or in
        /// flight): a peer that never acknowledges cannot make this node hold more for it.
        public var maximumRequestedUnacknowledged = 256
        /// This node's own writes still pending (no peer acknowledged them) offered to a session when its peer
        /// starts carrying their channel, at most: the peer stores them, or acknowledges them again if it has them
        /// already, as a Firestore client sends its pending writes again when it reconnects. (An acknowledgement
        /// lost with a session, or with this node's stop, left them pending for good: reconciliation sends a peer
        /// only what it lacks.)
        public var maximumPendingWritesOffered = 256
        /// Messages over a budget a session may send (each ignored) before it ends.
        public var overBudgetLimit = 1_000
        /// One line per host per interval about its refused connections: the first at once, the rest summed.
        public var refusalNoticeInterval: UInt64 = 10_000
        /// Hosts remembered; beyond, the least recently seen one that is not ignored is forgotten.
        public var maximumRememberedHosts = 4_096
        /// The gossip core's settings.
        public var gossip = GossipInstance.Settings()
        /// The blob fetch core's settings.
        public var blobFetch = BlobFetchInstance.Settings()
        /// The partial views' settings, once the node listens (PROTOCOL.md §2.9); nil: it dials every address it
        /// finds and keeps a session with each.
        public var partialView: PartialView.Settings? = PartialView.Settings()
        /// Membership messages a host may send at once, and per second: far above a member's few a second.
        /// Beyond, ignored and counted.
        public var hostMembershipBurst = 64.0
        public var hostMembershipPerSecond = 16.0

        /// The defaults.
        public init() {}
    }

    /// The settings in force.
    public let settings: Settings
    /// This node's identity.
    public let identity: PublicKey
    var gossip: GossipInstance
    var reconciliation = ReconciliationInstance()
    var blobs: BlobFetchInstance
    /// When the blob fetch core asked to be woken.
    var blobWake: UInt64?
    /// This node's latest profile, offered to every peer once per session.
    var ownProfile: GossipDocument?
    var directory = DiscoveryDirectory(ownInstance: "")
    var random: SplitMix64
    /// Documents of this node's own waiting for a first relay: no established peer carried their channel when
    /// they were stemmed (``stem(_:in:photo:)``). At most ``maximumWaitingStems``; the oldest go first (reconciliation
    /// still offers them).
    var waitingStems: [(document: GossipDocument, channel: ChannelID, photo: BlobHash?)] = []
    /// The most documents waiting for a first relay.
    static let maximumWaitingStems = 256
    /// The sealed photos of this node's own envelopes, with the peer each envelope was stemmed to (nil while it
    /// waits for one) and when: served to that peer alone for a while (``stemPhotoServing``).
    var stemmedPhotos: [BlobHash: (peer: PeerID?, since: UInt64)] = [:]
    var links: [PeerID: PeerLink] = [:]
    var now: UInt64
    var stopped = false
    /// The channels this node carries, sorted.
    var joined: [ChannelID] = []
    /// Addresses to stay connected to, with the pause before the next dial, and when that dial is due.
    var dialTargets: [PeerAddress: UInt64] = [:]
    var redialAt: [PeerAddress: UInt64] = [:]
    /// Dialled addresses whose session turned out to duplicate one with the same peer: dialled again only once
    /// that peer's last session ends.
    var coveredAddresses: [PeerAddress: PublicKey] = [:]
    /// Identities ignored until a time, for having sent too many invalid documents.
    var banned: [PublicKey: UInt64] = [:]
    /// What this node remembers of each host, and the hosts with refused connections not yet told to the user.
    var hosts: [String: HostStanding] = [:]
    var heldRefusals: Set<String> = []
    /// Identities whose documents are checked before they show: each sent one of its own whose signature failed.
    var checkedFirst: Set<PublicKey> = []
    /// The UDP port this node takes datagrams on, once it has one; sessions by the index their datagrams carry.
    var datagramPort: UInt16?
    var datagramSessions: [UInt32: PeerID] = [:]
    var nextLivenessCheck: UInt64
    var nextAntiEntropy: UInt64
    /// When the last anti-entropy round ran (nil: none yet).
    var lastAntiEntropy: UInt64?
    /// When gossip asked to be woken, and the time the shell was last asked to wake the core.
    var gossipWake: UInt64?
    var armed: UInt64?
    /// The partial views (once the node listens; their own address holds its port), and when they asked to be
    /// woken.
    var view: PartialView?
    var viewWake: UInt64?
    /// Whether the node joined the overlay through a contact (its first spare).
    var hasJoined = false
    /// Membership messages waiting for a session with their address, and the addresses dialled for the views.
    var waiting: [PeerAddress: [MembershipMessage]] = [:]
    var waitingSince: [PeerAddress: UInt64] = [:]
    var membershipDials: Set<PeerAddress> = []
    /// Addresses DNS-SD advertises now (spares of the views), and when each may be offered again after a failed
    /// dial.
    var advertised: Set<PeerAddress> = []
    var advertisedRetryAt: [PeerAddress: UInt64] = [:]
    /// Addresses where a dial reached this node itself (at most ``maximumWaitingAddresses``).
    var ownAddresses: Set<PeerAddress> = []
    /// The directives of the event being handled.
    var output: [Directive] = []

    /// A node's peers, none yet, at `now`; `random` makes every random choice (seed it from the system in a
    /// node, with a constant in a test).
    public init(identity: PublicKey, now: UInt64, random: SplitMix64, settings: Settings = Settings()) {
        self.identity = identity
        self.now = now
        self.random = random
        self.settings = settings
        gossip = GossipInstance(settings: settings.gossip)
        blobs = BlobFetchInstance(settings: settings.blobFetch)
        nextLivenessCheck = now + settings.livenessCheckInterval
        nextAntiEntropy = now + settings.antiEntropyInterval
    }

    /// Handles one event at `now` (milliseconds on a clock that never goes back); what the shell must do.
    public mutating func handle(_ event: Event, now: UInt64) -> [Directive] {
        self.now = max(self.now, now)
        output = []
        advanceGossipClock()
        switch event {
        case .opened(let id, let remote, let dialled): opened(id, remote: remote, dialled: dialled)
        case .dialFailed(let address):
            scheduleRedial(address)
            membershipDialFailed(address)
        case .established(let id, let peer, let hash): established(id, peer: peer, handshakeHash: hash)
        case .message(let id, let bytes): received(bytes, on: id)
        case .heard(let id): links[id]?.lastHeard = self.now
        // A peer says goodbye on a session while another stays when it closes a duplicate (PROTOCOL.md §2.8).
        case .closed(let id, let reason): closed(id, reason: reason, asDuplicate: reason == "\(SessionError.goodbye)")
        case .datagram(let bytes): receivedDatagram(bytes)
        case .datagramsRefused(let datagrams):
            for datagram in datagrams { send(datagram.message, to: datagram.peer) }
        case .datagramPort(let port): datagramPort = port
        case .listening(let port): startViews(listeningOn: port)
        case .known(let address): consider(address)
        case .connect(let address):
            connect(to: address)
            spare(address)
        case .forget(let address): forget(address)
        case .advertised(let instance): directory = DiscoveryDirectory(ownInstance: instance)
        case .discovered(let report): follow(directory.handle(report))
        case .published(let document, let channel):
            followGossip(gossip.handle(.published(id: document.id, channel: channel, bytes: document.bytes)))
        case .unpublished(let id): followGossip(gossip.handle(.unpublished(id)))
        case .stem(let document, let channel, let photo): stem(document, in: channel, photo: photo)
        case .askForOwnPhoto(let photo): askForOwnPhoto(photo)
        case .ownProfile(let profile): offerProfile(profile)
        case .joinedChanged(let channels): joinedChanged(channels)
        case .itemsLoaded(let channel, let peer, let payload, let items):
            follow(reconciliation.handle(.itemsLoaded(channel, for: peer, answering: payload, items: items)))
        case .documentsLoaded(let documents, let peer): offer(documents, to: peer)
        case .checked(let verified, let invalid, let from): checked(verified, invalid: invalid, from: from)
        case .settled(let admissions): settle(admissions)
        case .fetchBlob(let blob, let manifest, let held, let limit):
            followBlobs(.fetch(blob, manifest: manifest, held: held, sizeLimit: limit))
        case .cancelBlobFetch(let blob): followBlobs(.cancel(blob))
        case .blobChunkStored(let blob, let index, let success):
            followBlobs(.stored(blob, index: index, success: success))
        case .blobRead(let messages, let peer): blobRead(messages, for: peer)
        case .timer: timer()
        case .stop: stop()
        }
        armTimer()
        defer { output = [] }
        return output
    }

    // MARK: Queries

    /// The established sessions, one per peer (the oldest, while a duplicate is being settled), by identity.
    public var sessions: [LinkSummary] {
        var seen: Set<PublicKey> = []
        return links.keys.sorted().compactMap { links[$0]?.summary }.filter { seen.insert($0.peer).inserted }
            .sorted { $0.peer < $1.peer }
    }

    /// The peers the user was told joined and not yet told left, one per peer, by identity: with partial views,
    /// the neighbours and the peers that keep no views, not the sessions that carry a few membership messages
    /// and end (``sessions`` lists those too).
    public var joinedPeers: [LinkSummary] {
        var seen: Set<PublicKey> = []
        return links.keys.sorted().compactMap { id in links[id].flatMap { $0.announced ? $0.summary : nil } }
            .filter { seen.insert($0.peer).inserted }.sorted { $0.peer < $1.peer }
    }

    /// Batches gossip sent again for want of a timely acknowledgement, and the documents in them.
    public var gossipResends: (batches: Int, documents: Int) { (gossip.batchesResent, gossip.documentsResent) }

    /// The session of a connection, once its peer is known.
    public func summary(of id: PeerID) -> LinkSummary? { links[id]?.summary }

    // MARK: Time

    /// Gossip hears the time before every event, so that nothing it sends at once carries a stale time.
    mutating func advanceGossipClock() {
        if let due = gossipWake, due <= now { gossipWake = nil }
        followGossip(gossip.handle(.tick(now: now)))
    }

    /// Asks the shell for one timer, at the earliest time anything is due; only when that time changed.
    private mutating func armTimer() {
        guard !stopped else { return }
        var earliest = min(nextLivenessCheck, nextAntiEntropy)
        if let gossipWake { earliest = min(earliest, gossipWake) }
        if let blobWake { earliest = min(earliest, blobWake) }
        if let viewWake { earliest = min(earliest, viewWake) }
        if let redial = redialAt.values.min() { earliest = min(earliest, redial) }
        guard earliest != armed else { return }
        armed = earliest
        output.append(.wake(at: earliest))
    }

    private mutating func timer() {
        armed = nil
        let due = redialAt.filter { $0.value <= now }.keys.sorted()
        for address in due {
            redialAt[address] = nil
            redial(address)
        }
        if now >= nextLivenessCheck {
            nextLivenessCheck = now + settings.livenessCheckInterval
            checkLiveness()
            offerAdvertisedSpares()
            expireWaiting()
            endUnneededSessions()
        }
        if let due = viewWake, due <= now {
            viewWake = nil
            followView(.timer)
        }
        if let due = blobWake, due <= now {
            blobWake = nil
            followBlobs(.tick)
        }
        if now >= nextAntiEntropy {
            nextAntiEntropy = now + settings.antiEntropyInterval
            lastAntiEntropy = now
            antiEntropyRound()
        }
    }

    private mutating func stop() {
        stopped = true
        for id in links.keys.sorted() { retire(id) }
        redialAt = [:]
    }
}

/// A batch sealed as one datagram for one peer, with the message it carries (sent over the session instead
/// if the system refuses the datagram).
public struct OutgoingDatagram: Sendable, Equatable {
    /// The session it belongs to.
    public let peer: PeerID
    /// Where the peer takes datagrams.
    public let address: PeerAddress
    /// The sealed datagram.
    public let bytes: [UInt8]
    /// The batch it carries.
    public let message: GossipMessage
}
