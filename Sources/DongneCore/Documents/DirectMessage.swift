/// The body of a `direct` document: a 1:1 message whose content only its two parties can read.
///
/// The content (a canonical CBOR map holding exactly one of the message content fields) is sealed twice with
/// libsodium's sealed boxes (X25519 keys converted from the Ed25519 identities, XSalsa20-Poly1305): once to the
/// recipient and once to the author, so the author can read its own sent messages later. The document signature
/// covers both ciphertexts, which is what proves who sent it.
public struct DirectMessage: Hashable, Sendable {
    /// Who the message is for.
    public var recipient: PublicKey
    /// The content sealed to the recipient.
    public var sealedForRecipient: [UInt8]
    /// The content sealed to the author.
    public var sealedForAuthor: [UInt8]

    /// A direct body from ciphertexts already made.
    public init(recipient: PublicKey, sealedForRecipient: [UInt8], sealedForAuthor: [UInt8]) {
        self.recipient = recipient
        self.sealedForRecipient = sealedForRecipient
        self.sealedForAuthor = sealedForAuthor
    }

    /// Seals `content` from `author` to `recipient`.
    public static func seal(
        _ content: MessageContent, from author: SigningKey, to recipient: PublicKey
    ) throws(DocumentError) -> DirectMessage {
        try seal(content, from: author, to: recipient, ephemeralSeeds: (Sodium.randomBytes(32), Sodium.randomBytes(32)))
    }

    /// Seals with ephemeral keys from fixed seeds: only for reproducible test vectors, since reusing a seed
    /// would let anyone link the messages.
    @_spi(TestVectors)
    public static func seal(
        _ content: MessageContent, from author: SigningKey, to recipient: PublicKey,
        ephemeralSeeds: (recipient: [UInt8], author: [UInt8])
    ) throws(DocumentError) -> DirectMessage {
        try MessageFields.validate(content)
        let plaintext = CBOREncoder.encode(.map(MessageFields.entries(for: content)))
        guard
            let forRecipient = Sodium.seal(
                plaintext, toEd25519: recipient.bytes, ephemeralSeed: ephemeralSeeds.recipient),
            let forAuthor = Sodium.seal(
                plaintext, toEd25519: author.publicKey.bytes, ephemeralSeed: ephemeralSeeds.author)
        else { throw .recipientKeyNotAPoint }
        return DirectMessage(recipient: recipient, sealedForRecipient: forRecipient, sealedForAuthor: forAuthor)
    }

    /// The content, if `key` is the recipient's or the author's key and the content is valid; nil otherwise.
    public func open(with key: SigningKey) -> MessageContent? {
        let sealed = key.publicKey == recipient ? sealedForRecipient : sealedForAuthor
        guard let plaintext = key.openSealed(sealed),
            case .map(let entries)? = try? CBORDecoder.decode(plaintext),
            let content = try? MessageFields.content(from: entries)
        else { return nil }
        return content
    }
}
