/// Why bytes are not a valid dongne document, naming the rule they break.
///
/// ``rule`` is the stable name the spec (`Protocol/PROTOCOL.md`) and the invalid test vectors use.
public enum DocumentError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The signed document is larger than ``DocumentLimits/maximumDocumentBytes``.
    case tooLarge(size: Int, limit: Int)
    /// The bytes are not one canonical CBOR data item.
    case encoding(CBORError)
    /// The data item is not an array of an unsigned-document map and a byte-string signature.
    case notAnEnvelope
    /// The `version` field names a protocol version this code does not speak.
    case unsupportedVersion(UInt64)
    /// A required field is absent.
    case missingField(String)
    /// A field key that this kind does not define (or a key that is not an unsigned integer).
    case unexpectedField(String)
    /// A field holds the wrong CBOR type.
    case wrongType(field: String)
    /// A key, hash or signature of the wrong length.
    case wrongLength(field: String, expected: Int, actual: Int)
    /// A byte string outside its allowed size range.
    case sizeOutOfRange(field: String, size: Int, range: ClosedRange<Int>)
    /// A text that is empty or only white space where content is required.
    case emptyText(field: String)
    /// A text longer than its limit, in UTF-8 bytes.
    case textTooLong(field: String, bytes: Int, limit: Int)
    /// A text holding a control character it may not hold.
    case controlCharacter(field: String)
    /// A NaN or infinite number.
    case nonFiniteNumber(field: String)
    /// A latitude outside [-90, 90].
    case latitudeOutOfRange(Double)
    /// A longitude outside [-180, 180].
    case longitudeOutOfRange(Double)
    /// A `created` time beyond ``DocumentLimits/maximumCreated``.
    case createdOutOfRange(UInt64)
    /// A message that does not hold exactly one of text, photo and location.
    case messageContentCount(Int)
    /// A channel name that is not in its normal form (NFC, no surrounding white space).
    case channelNameNotNormalized
    /// A channel document whose `channel` field is not the id derived from its name.
    case channelIDMismatch
    /// The signature is not the author's signature of the document id.
    case badSignature
    /// A sealed inner document whose authenticator is not its author's to the recipient (PROTOCOL.md §1.8): a
    /// recipient's rule, applied to what it opens.
    case badAuthenticator
    /// A sealed direct message whose photo is not the one its envelope names (or an envelope that names a photo
    /// around anything else) (PROTOCOL.md §1.8, *Photos*): a recipient's rule, applied to what it opens, so that
    /// a photo comes only with the bytes its envelope's stamp paid for.
    case photoMismatch
    /// A byte string that must have one of a few padded sizes (an envelope's `box`) has another.
    case notAPaddedSize(field: String, size: Int)
    /// An envelope whose `created` is not a whole hour.
    case createdNotWholeHour(UInt64)
    /// A direct message cannot be sealed to this recipient key: it is not a valid Ed25519 point. (A signing-time
    /// error only: a received document is not checked for it.)
    case recipientKeyNotAPoint

    /// The stable name of the broken rule.
    public var rule: String {
        switch self {
        case .tooLarge: "document-too-large"
        case .encoding(let error): error.rule
        case .notAnEnvelope: "envelope-shape"
        case .unsupportedVersion: "unsupported-version"
        case .missingField: "missing-field"
        case .unexpectedField: "unexpected-field"
        case .wrongType: "wrong-type"
        case .wrongLength: "wrong-length"
        case .sizeOutOfRange: "size-out-of-range"
        case .emptyText: "empty-text"
        case .textTooLong: "text-too-long"
        case .controlCharacter: "control-character"
        case .nonFiniteNumber: "non-finite-number"
        case .latitudeOutOfRange: "latitude-out-of-range"
        case .longitudeOutOfRange: "longitude-out-of-range"
        case .createdOutOfRange: "created-out-of-range"
        case .messageContentCount: "message-content-not-exactly-one"
        case .channelNameNotNormalized: "channel-name-not-normalized"
        case .channelIDMismatch: "channel-id-mismatch"
        case .badSignature: "bad-signature"
        case .badAuthenticator: "bad-authenticator"
        case .photoMismatch: "photo-mismatch"
        case .notAPaddedSize: "size-not-padded"
        case .createdNotWholeHour: "created-not-whole-hour"
        case .recipientKeyNotAPoint: "recipient-key-not-a-point"
        }
    }

    /// One line for people: the rule and its particulars.
    public var description: String {
        switch self {
        case .tooLarge(let size, let limit): "\(rule): \(size) bytes, limit \(limit)"
        case .encoding(let error): "\(rule): \(error)"
        case .notAnEnvelope: "\(rule): expected [unsigned document map, signature]"
        case .unsupportedVersion(let version): "\(rule): version \(version)"
        case .missingField(let field), .unexpectedField(let field): "\(rule): \(field)"
        case .wrongType(let field), .emptyText(let field), .controlCharacter(let field),
            .nonFiniteNumber(let field):
            "\(rule): \(field)"
        case .wrongLength(let field, let expected, let actual): "\(rule): \(field) has \(actual) bytes, not \(expected)"
        case .sizeOutOfRange(let field, let size, let range): "\(rule): \(field) has \(size) bytes, allowed \(range)"
        case .textTooLong(let field, let bytes, let limit): "\(rule): \(field) has \(bytes) bytes, limit \(limit)"
        case .latitudeOutOfRange(let value), .longitudeOutOfRange(let value): "\(rule): \(value)"
        case .createdOutOfRange(let created), .createdNotWholeHour(let created): "\(rule): \(created)"
        case .notAPaddedSize(let field, let size): "\(rule): \(field) has \(size) bytes"
        case .messageContentCount(let count): "\(rule): \(count) of text, photo, location"
        case .channelNameNotNormalized, .channelIDMismatch, .badSignature, .badAuthenticator, .photoMismatch,
            .recipientKeyNotAPoint:
            rule
        }
    }
}
