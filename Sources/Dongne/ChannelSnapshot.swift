/// A channel as the channel list shows it: Firestore's document of the seed app's channel screen.
public struct ChannelSnapshot: SnapshotDocument, Hashable {
    /// The channel id.
    public let id: ChannelID
    /// Its name: as the user joined it, or from its latest `channel` document.
    public let name: String
    /// Its description, from its latest `channel` document.
    public let description: String?
    /// Whether the user joined it.
    public let isJoined: Bool
    /// When its newest message was created, if it has any.
    public let lastMessageCreated: UInt64?
    /// Cache state (no pending writes: the list is derived, never written).
    public let metadata: SnapshotMetadata

    /// Whether everything but the metadata is equal.
    public func hasSameData(as other: ChannelSnapshot) -> Bool {
        id == other.id && name == other.name && description == other.description && isJoined == other.isJoined
            && lastMessageCreated == other.lastMessageCreated
    }
}
