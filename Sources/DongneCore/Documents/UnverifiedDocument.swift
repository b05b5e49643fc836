/// A document that follows every rule but whose signature has not been checked yet.
///
/// Parsing is cheap (size, canonical CBOR, fields, one hash); verification costs an Ed25519 check, about fifty
/// times more. Keeping the two apart lets a receiver drop duplicates by ``id`` before paying for the signature.
public struct UnverifiedDocument: Hashable, Sendable {
    /// The id computed from the received bytes.
    public let id: DocumentID
    /// The protocol version.
    public let version: UInt64
    /// The claimed author.
    public let author: PublicKey
    /// Milliseconds since the Unix epoch, by the author's clock.
    public let created: UInt64
    /// The author's proof of work, if the document carries one.
    public let stamp: IdentityStamp?
    /// The decoded body.
    public let body: DocumentBody
    /// The claimed signature.
    public let signature: Signature
    /// The received bytes.
    public let bytes: [UInt8]

    init(
        id: DocumentID, version: UInt64, author: PublicKey, created: UInt64, stamp: IdentityStamp?,
        body: DocumentBody, signature: Signature, bytes: [UInt8]
    ) {
        self.id = id
        self.version = version
        self.author = author
        self.created = created
        self.stamp = stamp
        self.body = body
        self.signature = signature
        self.bytes = bytes
    }

    /// Checks every rule except the signature, and computes the id.
    public init(parsing bytes: [UInt8]) throws(DocumentError) {
        guard bytes.count <= DocumentLimits.maximumDocumentBytes else {
            throw .tooLarge(size: bytes.count, limit: DocumentLimits.maximumDocumentBytes)
        }
        let item: CBOR
        do { item = try CBORDecoder.decode(bytes) } catch { throw .encoding(error) }
        guard case .array(let parts) = item, parts.count == 2, case .map(let fields) = parts[0],
            case .bytes(let signatureBytes) = parts[1]
        else { throw .notAnEnvelope }
        guard let signature = Signature(signatureBytes) else {
            throw .wrongLength(field: "signature", expected: 64, actual: signatureBytes.count)
        }
        var reader = try FieldReader(fields)
        let version = try reader.unsigned(FieldKey.version, "version")
        guard version == DocumentLimits.protocolVersion else { throw .unsupportedVersion(version) }
        let kind = DocumentKind(number: try reader.unsigned(FieldKey.kind, "kind"))
        let author = PublicKey(raw: try reader.bytes32(FieldKey.author, "author"))
        let created = try reader.unsigned(FieldKey.created, "created")
        guard created <= DocumentLimits.maximumCreated else { throw .createdOutOfRange(created) }
        let channel = try reader.optionalBytes32(FieldKey.channel, "channel").map(ChannelID.init)
        let stamp = try reader.optionalStamp(FieldKey.stamp, "stamp")
        let body = try DocumentBody.read(kind: kind, channel: channel, from: &reader)
        try body.validate(created: created)
        // [unsigned, bstr(64)]: one array byte in front, the 2-byte string head and 64 signature bytes behind.
        let unsignedRange = 1..<(bytes.count - 66)
        self.init(
            id: DocumentID(Sodium.blake2b256(prefix: Document.idPrefix, bytes: bytes, range: unsignedRange)),
            version: version, author: author, created: created, stamp: stamp, body: body, signature: signature,
            bytes: bytes)
    }

    /// The channel it lives in, for the kinds that live in one.
    public var channel: ChannelID? { body.channel }

    /// The strength of the author's stamp (0 without one): one hash, cheap enough to check before the signature.
    public var stampStrength: Int { IdentityStamp.strength(of: stamp, for: author) }

    /// The document, once its signature is found to be the author's signature of its id.
    public func verified() throws(DocumentError) -> Document {
        guard author.isValidSignature(signature, of: Document.signaturePrefix + id.bytes) else { throw .badSignature }
        return Document(unverified: self)
    }
}

extension Document {
    /// Whether the signature is the author's signature of the id: for an inner document opened with its check
    /// deferred (``DirectMessageKey/SignatureCheck/deferred``), the one document that exists before it holds.
    public var signatureHolds: Bool { author.isValidSignature(signature, of: Document.signaturePrefix + id.bytes) }

    /// Parses bytes that this node verified before it stored them, without checking the signature again.
    ///
    /// Only the store calls this, for bytes it wrote after ``init(verifying:)`` accepted them; every rule except
    /// the signature is still checked, so a damaged file is an error, not a crash.
    package init(reloadingVerified bytes: [UInt8]) throws(DocumentError) {
        self.init(unverified: try UnverifiedDocument(parsing: bytes))
    }
}
