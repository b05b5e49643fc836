/// What the core knows of one connection: from the moment the shell opens it until it ends.
struct PeerLink: Sendable {
    /// The other end of the connection.
    let remote: PeerAddress
    /// The address this node dialled, for a session it started.
    let dialled: PeerAddress?
    /// The peer's identity, once the handshake proved it.
    var peer: PublicKey?
    /// Invalid documents the peer sent.
    var refused = 0
    /// Messages of types this version does not know, ignored.
    var unknownMessages = 0
    /// Batches dropped for exceeding the token bucket or the bound on documents waiting for their checks.
    var rateLimited = 0
    /// Reconciliation messages and requests ignored for exceeding their host's budgets.
    var overBudget = 0
    var tokens: TokenBucket
    /// Documents from this peer being checked and stored.
    var admitting = 0
    /// Documents from this peer shown before their checks, whose checks and storing are not done yet.
    var shownUnchecked: Set<DocumentID> = []
    /// This session's datagram keys and replay window, once established.
    var datagram: DatagramChannel?
    /// Where the peer takes datagrams for this session, and the index it tags them with.
    var datagramRoute: (address: PeerAddress, index: UInt32)?
    /// The index this node tags the session's datagrams with.
    var datagramIndex: UInt32?
    var datagramsDropped = 0
    /// Whether the session was closed for the caps on sessions once its peer was known, or because its peer is
    /// this node itself: no fault of its host's.
    var closedWithoutFault = false
    /// Whether the peer has sent anything over the session (so it has the session established too).
    var hasReceived = false
    /// When the connection opened (its handshake must be done by a deadline), and when its handshake was done.
    let openedAt: UInt64
    var establishedAt: UInt64?
    /// When the peer last sent anything, and when this node last sent it anything.
    var lastHeard: UInt64
    var lastSent: UInt64
    /// Sessions with the same peer that close once this one has carried the peer's first message.
    var replaces: [PeerID] = []
    /// The address the peer takes sessions on: the one dialled, or the one it announced (partial views).
    var listening: PeerAddress?
    /// When the peer named itself with `listening` (over a session it opened, or one this node dialled that was
    /// taken for no member's): its membership exchange (a join, a neighbour request) has its time from then,
    /// however long the connection took to get there.
    var namedAt: UInt64?
    /// Whether the dial that opened it was the partial views' (an address the user named is dialled for the user
    /// alone).
    var forMembership = false
    /// Whether the user was told that the peer joined over this session.
    var announced = false
    /// Whether this node sent the peer its `channels` over the session: then gossip runs over it.
    var toldChannels = false
    /// The peer's latest `channels`, held while this node has not told it its own (their views disagree for a
    /// moment, or the peer is of a version that tells every session): taken once this node tells.
    var heldChannels: [ChannelID]?
    /// Set when this node let the peer go with `disconnect`: the session then carries no gossip from this node and
    /// stays until the peer ends it (it does as it hears), or until this time at most, so that the peer's batches
    /// already on their way still land (see `GossipInstance.Event.draining`).
    var drainingUntil: UInt64?
    /// Whether the peer has sent a message over the session itself (not a datagram): the first one names a member.
    var spokeOnSession = false

    var isOutbound: Bool { dialled != nil }

    init(remote: PeerAddress, dialled: PeerAddress?, now: UInt64, tokens: TokenBucket) {
        self.remote = remote
        self.dialled = dialled
        self.listening = dialled
        self.tokens = tokens
        openedAt = now
        lastHeard = now
        lastSent = now
    }

    /// The session as the user sees it, once the peer is known.
    var summary: LinkSummary? {
        peer.map {
            LinkSummary(
                peer: $0, address: remote, isOutbound: isOutbound, refused: refused, rateLimited: rateLimited,
                datagramsDropped: datagramsDropped)
        }
    }
}
