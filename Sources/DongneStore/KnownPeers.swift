/// The peer addresses a node keeps for its next start (`known_peers`), and which of them it keeps.
///
/// Addresses come from peers: any host can make this node dial it on many ports (as a neighbour it offers in a
/// shuffle, say). So the table keeps the most recent ``Store/maximumKnownPeers`` addresses, and at most
/// ``Store/maximumKnownPeersPerHost`` of one host: a host cycling its ports pushes out its own older addresses,
/// never those of the other hosts met before.
extension Store {
    /// Peer addresses kept for the next start, of all hosts together.
    public static let maximumKnownPeers = 64

    /// Peer addresses kept for the next start per host (the text before an address's last `:`). A few nodes may
    /// share one machine; more than this on one host is what a host cycling its ports looks like.
    public static let maximumKnownPeersPerHost = 4

    /// Remembers a peer address that answered, forgetting the least recent beyond ``maximumKnownPeersPerHost``
    /// of its host and ``maximumKnownPeers`` in all.
    public func rememberPeer(_ address: String, at time: UInt64) async throws(StoreError) {
        try await writeSQL { connection throws(SQLiteError) in
            try connection.statement("INSERT OR REPLACE INTO known_peers (address, last_seen) VALUES (?, ?)")
                .bind(.text(address), .integer(Int64(time))).run()
            // Beyond what is read below: only a store written before the trim holds more.
            try connection.statement(
                """
                DELETE FROM known_peers WHERE address NOT IN
                    (SELECT address FROM known_peers ORDER BY last_seen DESC, address LIMIT ?)
                """
            ).bind(.integer(Int64(Self.rowsRead))).run()
            let all = try Self.addressesMostRecentFirst(connection)
            for forgotten in Set(all).subtracting(Self.kept(all)) {
                try connection.statement("DELETE FROM known_peers WHERE address = ?").bind(.text(forgotten)).run()
            }
        }
    }

    /// The peer addresses this node has reached, most recent first (as ``rememberPeer(_:at:)`` keeps them, also
    /// from a store written before it kept fewer).
    public func knownPeers() throws(StoreError) -> [String] {
        try read { connection throws(SQLiteError) in Self.kept(try Self.addressesMostRecentFirst(connection)) }
    }

    /// Of `addresses` (most recent first), those kept: the first ``maximumKnownPeersPerHost`` of each host, and of
    /// those the first ``maximumKnownPeers``.
    static func kept(_ addresses: [String]) -> [String] {
        var perHost: [Substring: Int] = [:]
        var kept: [String] = []
        for address in addresses where kept.count < maximumKnownPeers {
            let host = address.lastIndex(of: ":").map { address[..<$0] } ?? address[...]
            guard perHost[host, default: 0] < maximumKnownPeersPerHost else { continue }
            perHost[host, default: 0] += 1
            kept.append(address)
        }
        return kept
    }

    /// The most rows of `known_peers` read: enough to keep ``maximumKnownPeers`` however they share hosts, and a
    /// bound on the work a store written before the trim (which kept every address) makes at a start.
    static let rowsRead = maximumKnownPeers * maximumKnownPeersPerHost

    /// The most recent ``rowsRead`` rows of `known_peers`, most recent first.
    private static func addressesMostRecentFirst(_ connection: Connection) throws(SQLiteError) -> [String] {
        let statement = try connection.statement(
            "SELECT address FROM known_peers ORDER BY last_seen DESC, address LIMIT ?"
        ).bind(.integer(Int64(rowsRead)))
        var addresses: [String] = []
        while try statement.step() { addresses.append(statement.text(0)) }
        return addresses
    }
}
