/// What a node remembers of one host (a peer's IP address), across its connections and sessions.
///
/// Identities are free and a connection costs nothing to open, so budgets that must hold against a hostile
/// machine are charged to the host the connections come from: each new connection takes a token, a connection
/// that ends before its handshake takes more, and every invalid document or broken rule takes one from a
/// second bucket. A host whose refusal bucket runs dry is ignored for a while: its connections close as they
/// open, before any handshake work. Reconciliation messages, requests and channel lists, which make this node
/// read its store, draw on buckets of their own.
struct HostStanding: Sendable, Equatable {
    /// New connections.
    var connections: TokenBucket
    /// Invalid documents, malformed messages and failed handshakes.
    var refusals: TokenBucket
    /// `reconcile` messages that make this node load a channel's items.
    var reconciliations: TokenBucket
    /// `request` messages that make this node read documents.
    var requests: TokenBucket
    /// `channels` lists that newly share a channel with this node, which start reconciliations.
    var channelLists: TokenBucket
    /// Chunks (and `blob want`s) this node read from its store for the host.
    var chunks: TokenBucket
    /// Membership messages, which make this node change its views, dial and send.
    var membership: TokenBucket
    /// Connections from the host are closed as they open until this time.
    var ignoredUntil: UInt64 = 0
    /// When the host last opened a connection (the least recent is forgotten first).
    var lastSeen: UInt64
    /// Refused connections not yet told to the user, the latest reason, and when the next line may go.
    var unreportedRefusals = 0
    var latestRefusal = ""
    var quietUntil: UInt64 = 0

    /// A host first seen at `now`, with full buckets.
    init(now: UInt64, settings: PeerInstance.Settings) {
        connections = TokenBucket(
            capacity: settings.hostConnectionBurst, ratePerSecond: settings.hostConnectionsPerSecond, now: now)
        refusals = TokenBucket(
            capacity: Double(settings.refusalLimit), ratePerSecond: settings.hostRefusalsForgivenPerSecond, now: now)
        reconciliations = TokenBucket(
            capacity: settings.hostReconcileBurst, ratePerSecond: settings.hostReconcilesPerSecond, now: now)
        requests = TokenBucket(
            capacity: settings.hostRequestBurst, ratePerSecond: settings.hostRequestsPerSecond, now: now)
        channelLists = TokenBucket(
            capacity: settings.hostChannelListBurst, ratePerSecond: settings.hostChannelListsPerSecond, now: now)
        chunks = TokenBucket(
            capacity: settings.hostChunkBurst, ratePerSecond: settings.hostChunksPerSecond, now: now)
        membership = TokenBucket(
            capacity: settings.hostMembershipBurst, ratePerSecond: settings.hostMembershipPerSecond, now: now)
        lastSeen = now
    }

    /// Whether the host is ignored at `now`.
    func isIgnored(at now: UInt64) -> Bool { now < ignoredUntil }
}
