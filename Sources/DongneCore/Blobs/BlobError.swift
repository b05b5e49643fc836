/// Why bytes are not a valid blob manifest or chunk (PROTOCOL.md part 3). Each case names its rule.
public enum BlobError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The manifest is larger than ``BlobLimits/maximumManifestBytes``.
    case manifestTooLarge(size: Int)
    /// The bytes are not one canonical CBOR data item.
    case encoding(CBORError)
    /// A field is missing, of the wrong type or length, or not defined.
    case field(DocumentError)
    /// `version` is not 1.
    case unsupportedVersion(UInt64)
    /// The media type is not one a photo may have.
    case unsupportedMediaType(String)
    /// The size is 0 or over ``BlobLimits/maximumBlobBytes``.
    case sizeOutOfRange(Int)
    /// The chunk size is not ``BlobLimits/chunkBytes``.
    case chunkSizeMismatch(Int)
    /// The number of chunk names is not the size divided by the chunk size, rounded up.
    case chunkCountMismatch(expected: Int, actual: Int)
    /// A side is 0 or over ``BlobLimits/maximumImageSide``.
    case dimensionOutOfRange(Int)
    /// The thumbnail is empty or over ``BlobLimits/maximumThumbnailBytes``.
    case thumbnailSizeOutOfRange(Int)

    /// The rule's name, as PROTOCOL.md part 3 writes it.
    public var rule: String {
        switch self {
        case .manifestTooLarge: "manifest-too-large"
        case .encoding(let error): error.rule
        case .field(let error): error.rule
        case .unsupportedVersion: "unsupported-version"
        case .unsupportedMediaType: "unsupported-media-type"
        case .sizeOutOfRange: "blob-size-out-of-range"
        case .chunkSizeMismatch: "chunk-size-mismatch"
        case .chunkCountMismatch: "chunk-count-mismatch"
        case .dimensionOutOfRange: "dimension-out-of-range"
        case .thumbnailSizeOutOfRange: "thumbnail-size-out-of-range"
        }
    }

    /// The rule and what broke it.
    public var description: String {
        switch self {
        case .manifestTooLarge(let size): "\(rule): \(size) bytes, at most \(BlobLimits.maximumManifestBytes)"
        case .encoding(let error): "\(error)"
        case .field(let error): "\(error)"
        case .unsupportedVersion(let version): "\(rule): \(version)"
        case .unsupportedMediaType(let type): "\(rule): \(type)"
        case .sizeOutOfRange(let size): "\(rule): \(size) bytes, 1 to \(BlobLimits.maximumBlobBytes)"
        case .chunkSizeMismatch(let size): "\(rule): \(size), not \(BlobLimits.chunkBytes)"
        case .chunkCountMismatch(let expected, let actual): "\(rule): \(actual) chunks, \(expected) expected"
        case .dimensionOutOfRange(let side): "\(rule): \(side) pixels, 1 to \(BlobLimits.maximumImageSide)"
        case .thumbnailSizeOutOfRange(let size): "\(rule): \(size) bytes, 1 to \(BlobLimits.maximumThumbnailBytes)"
        }
    }
}
