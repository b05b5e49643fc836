/// What a photo is, in a few KiB (PROTOCOL.md part 3): its media type, size, the names of its chunks in order,
/// its pixel size and a small thumbnail to show at once. The manifest is content-addressed like a document
/// (deterministic CBOR, §1.1): its ``hash`` is what a `message` document's `photo` field carries, so the signed
/// message fixes every chunk of the photo.
///
/// A **sealed** manifest (media type ``BlobLimits/sealedMediaType``) names the ciphertext of a direct message's
/// photo (``SealedPhoto``): it has no width, height nor thumbnail (those travel encrypted inside), so a relay
/// learns only its size.
public struct BlobManifest: Hashable, Sendable {
    /// The media type of the blob's bytes, one of ``BlobLimits/mediaTypes``.
    public let mediaType: String
    /// The blob's size in bytes.
    public let size: Int
    /// The names of its chunks, in order (``BlobChunk``).
    public let chunks: [Bytes32]
    /// Its width in pixels (0 for a sealed blob).
    public let width: Int
    /// Its height in pixels (0 for a sealed blob).
    public let height: Int
    /// A small JPEG of it, to show before the chunks arrive (empty for a sealed blob).
    public let thumbnail: [UInt8]
    /// The manifest's canonical encoding: what is hashed, stored and sent.
    public let bytes: [UInt8]
    /// Its content address.
    public let hash: BlobHash

    /// Whether it names a sealed photo's ciphertext.
    public var isSealed: Bool { mediaType == BlobLimits.sealedMediaType }

    /// Domain-separation prefix of a manifest's hash: ASCII `dongne.blob.manifest.v1` and a zero byte.
    public static let prefix: [UInt8] = Array("dongne.blob.manifest.v1".utf8) + [0]

    /// The hash of a manifest with these bytes: what a message's `photo` field names. Checked before the bytes are
    /// parsed, so that a manifest that is not the one asked for costs one hash.
    public static func hash(of bytes: [UInt8]) -> BlobHash { BlobHash(BLAKE2b.hash256(bytes, prefix: prefix)) }

    enum Key {
        static let version: UInt64 = 0
        static let mediaType: UInt64 = 1
        static let size: UInt64 = 2
        static let chunkSize: UInt64 = 3
        static let chunks: UInt64 = 4
        static let width: UInt64 = 5
        static let height: UInt64 = 6
        static let thumbnail: UInt64 = 7
    }

    /// The manifest of a blob with these properties; the rule they break, if any.
    public init(
        mediaType: String, size: Int, chunks: [Bytes32], width: Int, height: Int, thumbnail: [UInt8]
    ) throws(BlobError) {
        try Self.check(mediaType: mediaType, size: size, chunkCount: chunks.count, width: width, height: height,
            thumbnail: thumbnail.count)
        var entries = [
            CBORMapEntry(.unsigned(Key.version), .unsigned(BlobLimits.manifestVersion)),
            CBORMapEntry(.unsigned(Key.mediaType), .text(mediaType)),
            CBORMapEntry(.unsigned(Key.size), .unsigned(UInt64(size))),
            CBORMapEntry(.unsigned(Key.chunkSize), .unsigned(UInt64(BlobLimits.chunkBytes))),
            CBORMapEntry(.unsigned(Key.chunks), .array(chunks.map { .bytes($0.bytes) })),
        ]
        if mediaType != BlobLimits.sealedMediaType {
            entries += [
                CBORMapEntry(.unsigned(Key.width), .unsigned(UInt64(width))),
                CBORMapEntry(.unsigned(Key.height), .unsigned(UInt64(height))),
                CBORMapEntry(.unsigned(Key.thumbnail), .bytes(thumbnail)),
            ]
        }
        let bytes = CBOREncoder.encode(.map(entries))
        guard bytes.count <= BlobLimits.maximumManifestBytes else { throw .manifestTooLarge(size: bytes.count) }
        self.init(
            mediaType: mediaType, size: size, chunks: chunks, width: width, height: height, thumbnail: thumbnail,
            bytes: bytes)
    }

    /// The sealed manifest of a photo's ciphertext of `size` bytes cut into chunks named `chunks`
    /// (``SealedPhoto``).
    public init(sealedSize size: Int, chunks: [Bytes32]) throws(BlobError) {
        try self.init(
            mediaType: BlobLimits.sealedMediaType, size: size, chunks: chunks, width: 0, height: 0, thumbnail: [])
    }

    /// The manifest these bytes encode, checked against every rule of part 3; the first rule broken.
    public init(parsing bytes: [UInt8]) throws(BlobError) {
        guard bytes.count <= BlobLimits.maximumManifestBytes else { throw .manifestTooLarge(size: bytes.count) }
        let item: CBOR
        do { item = try CBORDecoder.decode(bytes) } catch { throw .encoding(error) }
        guard case .map(let entries) = item else { throw .field(.wrongType(field: "manifest")) }
        let fields: Fields
        do { fields = try Self.read(entries) } catch { throw .field(error) }
        guard fields.version == BlobLimits.manifestVersion else { throw .unsupportedVersion(fields.version) }
        guard fields.chunkSize == BlobLimits.chunkBytes else { throw .chunkSizeMismatch(fields.chunkSize) }
        try Self.check(
            mediaType: fields.mediaType, size: fields.size, chunkCount: fields.chunks.count, width: fields.width,
            height: fields.height, thumbnail: fields.thumbnail.count)
        self.init(
            mediaType: fields.mediaType, size: fields.size, chunks: fields.chunks, width: fields.width,
            height: fields.height, thumbnail: fields.thumbnail, bytes: bytes)
    }

    private struct Fields {
        var version: UInt64
        var mediaType: String
        var size: Int
        var chunkSize: Int
        var chunks: [Bytes32]
        var width: Int
        var height: Int
        var thumbnail: [UInt8]
    }

    /// The manifest's fields by their types, refusing any other key.
    private static func read(_ entries: [CBORMapEntry]) throws(DocumentError) -> Fields {
        var reader = try FieldReader(entries)
        let version = try reader.unsigned(Key.version, "version")
        let mediaType = try reader.text(Key.mediaType, "mediaType")
        let size = clamped(try reader.unsigned(Key.size, "size"))
        let chunkSize = clamped(try reader.unsigned(Key.chunkSize, "chunkSize"))
        guard case .array(let items) = try reader.required(Key.chunks, "chunks") else {
            throw .wrongType(field: "chunks")
        }
        var chunks: [Bytes32] = []
        chunks.reserveCapacity(min(items.count, BlobLimits.maximumChunks))
        for item in items { chunks.append(try FieldReader.bytes32(item, "chunks")) }
        // A sealed manifest has no image fields: reading none leaves them to `finish()` to refuse.
        let isSealed = mediaType == BlobLimits.sealedMediaType
        let width = isSealed ? 0 : clamped(try reader.unsigned(Key.width, "width"))
        let height = isSealed ? 0 : clamped(try reader.unsigned(Key.height, "height"))
        let thumbnail = isSealed ? [] : try reader.bytes(Key.thumbnail, "thumbnail")
        try reader.finish()
        return Fields(
            version: version, mediaType: mediaType, size: size, chunkSize: chunkSize, chunks: chunks, width: width,
            height: height, thumbnail: thumbnail)
    }

    private init(
        mediaType: String, size: Int, chunks: [Bytes32], width: Int, height: Int, thumbnail: [UInt8], bytes: [UInt8]
    ) {
        self.mediaType = mediaType
        self.size = size
        self.chunks = chunks
        self.width = width
        self.height = height
        self.thumbnail = thumbnail
        self.bytes = bytes
        hash = Self.hash(of: bytes)
    }

    /// Every rule but the encoding's, cheapest first.
    private static func check(
        mediaType: String, size: Int, chunkCount: Int, width: Int, height: Int, thumbnail: Int
    ) throws(BlobError) {
        let isSealed = mediaType == BlobLimits.sealedMediaType
        guard isSealed || BlobLimits.mediaTypes.contains(mediaType) else { throw .unsupportedMediaType(mediaType) }
        guard (1...BlobLimits.maximumBlobBytes).contains(size) else { throw .sizeOutOfRange(size) }
        let expected = BlobChunk.count(forSize: size)
        guard chunkCount == expected else { throw .chunkCountMismatch(expected: expected, actual: chunkCount) }
        guard !isSealed else { return }
        for side in [width, height] where !(1...BlobLimits.maximumImageSide).contains(side) {
            throw .dimensionOutOfRange(side)
        }
        guard (1...BlobLimits.maximumThumbnailBytes).contains(thumbnail) else {
            throw .thumbnailSizeOutOfRange(thumbnail)
        }
    }

    /// A number from the wire as an `Int`, saturating: anything that large breaks a range rule anyway.
    private static func clamped(_ value: UInt64) -> Int { value > UInt64(Int.max) ? .max : Int(value) }
}
