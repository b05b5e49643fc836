/// The channels a node knows — joined by its user or named by a `channel` document — read once or listened to
/// with the same semantics as message queries (see ``ListenerHub``). The seed app's channel screen.
///
/// A channel is `added` when it is joined or first named, `modified` when its description or newest message
/// changes, and `removed` when it is left (unless a `channel` document still names it).
public struct ChannelListQuery: Sendable {
    let node: Node

    /// Reads the list once; every channel comes as `added`.
    public func getDocuments() async throws -> QuerySnapshot<ChannelSnapshot> {
        let isFromCache = await node.hub.isFromCacheAnywhere()
        return QuerySnapshot(reading: try node.source.channels(isFromCache: isFromCache), isFromCache: isFromCache)
    }

    /// Listens to the list: the first snapshot holds every channel as `added`, later ones what changed.
    public func addSnapshotListener(
        includeMetadataChanges: Bool = false,
        _ listener: @escaping @Sendable (QuerySnapshot<ChannelSnapshot>?, (any Error)?) -> Void
    ) -> ListenerRegistration {
        node.hub.listenToChannels(includeMetadataChanges: includeMetadataChanges, callback: listener)
    }

    /// The list's snapshots as an asynchronous sequence; ending the iteration removes the listener.
    public func snapshots(
        includeMetadataChanges: Bool = false
    ) -> AsyncThrowingStream<QuerySnapshot<ChannelSnapshot>, any Error> {
        QuerySnapshot.stream { addSnapshotListener(includeMetadataChanges: includeMetadataChanges, $0) }
    }
}
