/// Every bound of the blob protocol (PROTOCOL.md part 3), by the name the spec uses; a test keeps the spec's table
/// and these equal.
public enum BlobLimits {
    /// The only manifest `version` accepted.
    public static let manifestVersion: UInt64 = 1
    /// Bytes per chunk; the last chunk of a blob may be shorter. A chunk travels in one gossip message, which with
    /// its CBOR head, the blob's and chunk's names and the Noise tag stays well inside one 65,535-byte frame.
    public static let chunkBytes = 49_152
    /// The largest blob: 32 MiB, more than any photo a phone takes.
    public static let maximumBlobBytes = 33_554_432
    /// The most chunks a blob has (``maximumBlobBytes`` / ``chunkBytes``, rounded up).
    public static let maximumChunks = (maximumBlobBytes + chunkBytes - 1) / chunkBytes
    /// The largest thumbnail a manifest carries.
    public static let maximumThumbnailBytes = 8_192
    /// The largest image side, in pixels.
    public static let maximumImageSide = 65_535
    /// The largest encoded manifest: every chunk name and the largest thumbnail fit, and it travels in one frame.
    public static let maximumManifestBytes = 40_960
    /// The media types a photo may have.
    public static let mediaTypes: Set<String> = ["image/jpeg", "image/png", "image/webp"]
    /// The media type of a sealed manifest: a direct message's photo, encrypted (``SealedPhoto``).
    public static let sealedMediaType = "application/octet-stream"
    /// The largest photo a direct message carries, before it is sealed (8 MiB, what every relay fetches at once).
    public static let maximumDirectPhotoBytes = 8 << 20
    /// The largest sealed photo an envelope may name (9 MiB): the largest direct photo, its manifest and its tags
    /// fit, and no relay fetches more for one envelope.
    public static let maximumSealedPhotoBytes = 9 << 20
}
