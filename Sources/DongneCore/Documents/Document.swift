/// A signed document whose signature has been checked: the only kind of document that is stored, shown or
/// forwarded. (One exception, never stored or forwarded: a direct message opened with its signature's check
/// deferred, ``DirectMessageKey/SignatureCheck/deferred``, shown on its authenticator until that check.)
///
/// On the wire and on disk a document is the CBOR array `[unsigned, signature]`, where `unsigned` is the
/// canonical map of its fields and `signature` a 64-byte string. Because the encoding is canonical, the unsigned
/// bytes are exactly `bytes[1 ..< bytes.count - 66]`, so the id is computed over the received bytes themselves
/// and nothing is ever re-encoded:
///
/// - id = BLAKE2b-256(``idPrefix`` ‖ unsigned bytes)
/// - signature = Ed25519 by `author` over ``signaturePrefix`` ‖ id
public struct Document: Hashable, Sendable, Identifiable {
    /// The content address of the document.
    public let id: DocumentID
    /// The protocol version the document was written in.
    public let version: UInt64
    /// The Ed25519 key of the author, who signed it.
    public let author: PublicKey
    /// Milliseconds since the Unix epoch, by the author's clock.
    public let created: UInt64
    /// The author's proof of work, if the document carries one (``IdentityStamp``).
    public let stamp: IdentityStamp?
    /// What the document says.
    public let body: DocumentBody
    /// The author's signature of the id.
    public let signature: Signature
    /// The exact signed bytes: what is stored and forwarded.
    public let bytes: [UInt8]

    /// Domain-separation prefix of the id hash.
    public static let idPrefix: [UInt8] = Array("dongne.document.id.v1".utf8) + [0]
    /// Domain-separation prefix of the signed message.
    public static let signaturePrefix: [UInt8] = Array("dongne.document.sig.v1".utf8) + [0]

    /// The strength of the author's stamp (0 without one).
    public var stampStrength: Int { IdentityStamp.strength(of: stamp, for: author) }

    /// The kind of document.
    public var kind: DocumentKind { body.kind }
    /// The channel it lives in, for the kinds that live in one.
    public var channel: ChannelID? { body.channel }

    /// Parses and verifies `bytes`: every rule, then the signature. Throws the first rule broken.
    public init(verifying bytes: [UInt8]) throws(DocumentError) {
        self = try UnverifiedDocument(parsing: bytes).verified()
    }

    init(unverified: UnverifiedDocument) {
        id = unverified.id
        version = unverified.version
        author = unverified.author
        created = unverified.created
        stamp = unverified.stamp
        body = unverified.body
        signature = unverified.signature
        bytes = unverified.bytes
    }

    /// Signs `body` as `key`, with `created` in milliseconds since the Unix epoch and the key's stamp, if any.
    ///
    /// The same rules as decoding apply first, so a node never signs what its peers would refuse.
    public static func sign(_ body: DocumentBody, created: UInt64, by key: SigningKey) throws(DocumentError) -> Document
    {
        guard created <= DocumentLimits.maximumCreated else { throw .createdOutOfRange(created) }
        try body.validate()
        try body.validate(created: created)
        var entries = [
            CBORMapEntry(.unsigned(FieldKey.version), .unsigned(DocumentLimits.protocolVersion)),
            CBORMapEntry(.unsigned(FieldKey.kind), .unsigned(body.kind.number)),
            CBORMapEntry(.unsigned(FieldKey.author), .bytes(key.publicKey.bytes)),
            CBORMapEntry(.unsigned(FieldKey.created), .unsigned(created)),
        ]
        if let channel = body.channel {
            entries.append(CBORMapEntry(.unsigned(FieldKey.channel), .bytes(channel.bytes)))
        }
        if let stamp = key.stamp { entries.append(CBORMapEntry(.unsigned(FieldKey.stamp), .bytes(stamp.bytes))) }
        entries += body.bodyEntries
        let unsigned = CBOREncoder.encode(.map(entries))
        let (id, signature, bytes) = envelope(unsigned: unsigned, signedBy: key)
        guard bytes.count <= DocumentLimits.maximumDocumentBytes else {
            throw .tooLarge(size: bytes.count, limit: DocumentLimits.maximumDocumentBytes)
        }
        return Document(
            unverified: UnverifiedDocument(
                id: id, version: DocumentLimits.protocolVersion, author: key.publicKey, created: created,
                stamp: key.stamp, body: body, signature: signature, bytes: bytes))
    }

    /// The id, the signature and the signed envelope `[unsigned, signature]` of the unsigned bytes `unsigned`.
    static func envelope(
        unsigned: [UInt8], signedBy key: SigningKey
    ) -> (id: DocumentID, signature: Signature, bytes: [UInt8]) {
        let id = DocumentID(Sodium.blake2b256(prefix: idPrefix, bytes: unsigned))
        let signature = key.sign(signaturePrefix + id.bytes)
        var bytes = [UInt8]()
        bytes.reserveCapacity(unsigned.count + 67)
        bytes.append(0x82)
        bytes += unsigned
        CBOREncoder.append(.bytes(signature.bytes), to: &bytes)
        return (id, signature, bytes)
    }

    /// Signs arbitrary unsigned bytes, valid or not, into an envelope: for building invalid test vectors whose
    /// only fault is the one they are meant to show.
    @_spi(TestVectors)
    public static func signedEnvelope(unsigned: [UInt8], signedBy key: SigningKey) -> [UInt8] {
        envelope(unsigned: unsigned, signedBy: key).bytes
    }

    /// Documents are equal when their signed bytes are.
    public static func == (lhs: Document, rhs: Document) -> Bool { lhs.bytes == rhs.bytes }

    /// Hashes the id, which the bytes determine.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
