/// Whether a photo's bytes are on this node: local metadata, not part of the signed message.
public enum PhotoAvailability: Hashable, Sendable {
    /// A photo this user is sending, still being prepared (turned upright, stripped, stored): its message is a
    /// placeholder, replaced by the real one once the photo is ready (see ``PhotoSnapshot/localFile``).
    case preparing
    /// Not stored (a photo over the automatic-fetch size, say, until someone asks for it).
    case missing
    /// Being fetched from peers: the share of its chunks stored so far, 0 to 1.
    case fetching(Double)
    /// Stored whole: ``Node/photo(_:)`` reads it.
    case available
}

/// What a photo's manifest says: enough to show something at once.
public struct PhotoInfo: Hashable, Sendable {
    /// `image/jpeg`, `image/png` or `image/webp`.
    public let mediaType: String
    /// Bytes of the photo.
    public let size: Int
    /// Pixels.
    public let width: Int
    public let height: Int
    /// A small JPEG of it (at most 8 KiB).
    public let thumbnail: [UInt8]

    init(_ manifest: BlobManifest) {
        mediaType = manifest.mediaType
        size = manifest.size
        width = manifest.width
        height = manifest.height
        thumbnail = manifest.thumbnail
    }
}

/// A photo message's photo as this node has it: its name, its manifest once known, and its availability. Both
/// are local metadata (see the listener contract, sentence 11): they change without the message changing.
public struct PhotoSnapshot: Hashable, Sendable {
    /// The manifest's hash, which the signed message carries.
    public let hash: BlobHash
    /// The manifest's facts, once the manifest is stored here.
    public let info: PhotoInfo?
    /// Whether the photo's bytes are here.
    public let availability: PhotoAvailability
    /// For a photo this user is sending and that is still being prepared, the file they picked: what an app
    /// shows at once, before the photo has a manifest.
    public let localFile: String?
}
