/// Sealing a `direct` or `receipt` document into an envelope of the direct-message space (PROTOCOL.md §1.8).
///
/// The inner document, signed by its author's identity, is authenticated to the recipient under the pair's
/// conversation key (``SealingRecipient``), padded to one of ``DirectSpace/paddedSizes`` and sealed with
/// `crypto_box_seal` to the recipient's X25519 key (converted from its Ed25519 identity). The envelope is a
/// `sealed` document signed by a one-time key and dated by the hour: nothing in it is stable across envelopes, so
/// relays can neither tell who sent it or to whom, nor link two of one conversation.
public enum SealedEnvelope {
    /// Seals `inner`, written by `author`, to `recipient` in an envelope signed by `wrapper`, a fresh key used for
    /// this envelope only (stamped as ``DirectSpace/envelopeStampStrength(required:)`` asks), dated by the hour of
    /// `now`.
    /// When the inner document is a photo message, `photo` names its sealed photo (``SealedPhoto``) in the
    /// envelope, and `wrapper`'s stamp must be as much stronger as
    /// ``DirectSpace/envelopeStampStrength(required:photoSize:)`` asks.
    public static func seal(
        _ inner: Document, from author: SigningKey, to recipient: PublicKey, wrapper: SigningKey, at now: UInt64,
        photo: SealedPhotoReference? = nil
    ) throws(DocumentError) -> Document {
        guard let recipient = SealingRecipient(recipient, from: DirectMessageKey(author)) else {
            throw .recipientKeyNotAPoint
        }
        return try seal(inner, to: recipient, kit: EnvelopeKit(wrapper: wrapper), at: now, photo: photo)
    }

    /// Seals `inner` to `recipient` with a kit made ahead of need.
    public static func seal(
        _ inner: Document, to recipient: SealingRecipient, kit: EnvelopeKit, at now: UInt64,
        photo: SealedPhotoReference? = nil
    ) throws(DocumentError) -> Document {
        guard let prepared = PreparedSeal(kit: kit, recipient: recipient) else { throw .recipientKeyNotAPoint }
        return try seal(inner, with: prepared, at: now, photo: photo)
    }

    /// Seals `inner` with a seal prepared ahead of need: what a node does on a message's way out, so that only
    /// the box's symmetric encryption and the envelope's signature are left on it.
    public static func seal(
        _ inner: Document, with prepared: PreparedSeal, at now: UInt64, photo: SealedPhotoReference? = nil
    ) throws(DocumentError) -> Document {
        guard inner.kind == .direct || inner.kind == .receipt else { throw .wrongType(field: "kind") }
        guard inner.author == prepared.recipient.sender else { throw .wrongType(field: "author") }
        guard let padded = authenticatedAndPadded(inner, key: prepared.recipient.conversationKey) else {
            throw .tooLarge(size: inner.bytes.count, limit: DirectSpace.maximumInnerBytes)
        }
        guard
            let box = Sodium.seal(
                padded, toCurve: prepared.recipient.curve, ephemeralPublic: prepared.kit.ephemeralPublic,
                sharedKey: prepared.sharedKey)
        else { throw .recipientKeyNotAPoint }
        return try Document.sign(
            .sealed(SealedBox(box: box, photo: photo)), created: DirectSpace.envelopeCreated(at: now),
            by: prepared.kit.wrapper)
    }

    /// Seals with the ephemeral key from a fixed seed: only for reproducible test vectors, since a reused seed
    /// would link the envelopes.
    @_spi(TestVectors)
    public static func seal(
        _ inner: Document, from author: SigningKey, to recipient: PublicKey, wrapper: SigningKey, at now: UInt64,
        ephemeralSeed: [UInt8], photo: SealedPhotoReference? = nil
    ) throws(DocumentError) -> Document {
        guard inner.kind == .direct || inner.kind == .receipt else { throw .wrongType(field: "kind") }
        guard inner.author == author.publicKey else { throw .wrongType(field: "author") }
        guard let sealing = SealingRecipient(recipient, from: DirectMessageKey(author)) else {
            throw .recipientKeyNotAPoint
        }
        guard let padded = authenticatedAndPadded(inner, key: sealing.conversationKey) else {
            throw .tooLarge(size: inner.bytes.count, limit: DirectSpace.maximumInnerBytes)
        }
        guard let box = Sodium.seal(padded, toEd25519: recipient.bytes, ephemeralSeed: ephemeralSeed) else {
            throw .recipientKeyNotAPoint
        }
        return try Document.sign(
            .sealed(SealedBox(box: box, photo: photo)), created: DirectSpace.envelopeCreated(at: now), by: wrapper)
    }

    /// `bytes` after their authenticator under `conversationKey`, padded: only for tests of what a recipient
    /// refuses, with bytes no signer would sign.
    @_spi(TestVectors)
    public static func authenticatedAndPadded(_ bytes: [UInt8], conversationKey: [UInt8]) -> [UInt8]? {
        let authenticated = Sodium.authenticator(of: bytes, key: conversationKey) + bytes
        guard let size = DirectSpace.paddedSizes.first(where: { authenticated.count < $0 }) else { return nil }
        return Sodium.pad(authenticated, to: size)
    }

    /// Seals bytes already padded, unchecked (with the ephemeral key from `ephemeralSeed` if given): only for
    /// tests and vectors of what a recipient refuses.
    @_spi(TestVectors)
    public static func sealPadded(_ padded: [UInt8], to recipient: PublicKey, ephemeralSeed: [UInt8]? = nil)
        throws(DocumentError) -> [UInt8]
    {
        let seed = ephemeralSeed ?? Sodium.randomBytes(32)
        guard let box = Sodium.seal(padded, toEd25519: recipient.bytes, ephemeralSeed: seed) else {
            throw .recipientKeyNotAPoint
        }
        return box
    }

    /// The authenticator of `inner` under the conversation `key`, then `inner`, padded to the smallest of
    /// ``DirectSpace/paddedSizes`` that holds them and the padding's first byte; nil when none does.
    static func authenticatedAndPadded(_ inner: Document, key: [UInt8]) -> [UInt8]? {
        authenticatedAndPadded(inner.bytes, conversationKey: key)
    }
}

/// What sealing one envelope takes that does not depend on its message: the one-time key that signs it and a
/// fresh ephemeral X25519 key pair. Each is used for one envelope only (reused, it would link two envelopes);
/// a node makes a few ahead of need.
public struct EnvelopeKit: Sendable {
    /// The one-time signing key, stamped as the network asks of envelopes.
    public let wrapper: SigningKey
    let ephemeralPublic: [UInt8]
    let ephemeralSecret: [UInt8]

    /// A kit signed by `wrapper`, with a new ephemeral key pair.
    public init(wrapper: SigningKey) {
        self.wrapper = wrapper
        (ephemeralPublic, ephemeralSecret) = Sodium.boxKeyPair()
    }
}

/// A kit and a recipient with the sealed box's Diffie-Hellman done (`crypto_box_beforenm`): one envelope to that
/// recipient, prepared ahead, when a conversation is likely to go on.
public struct PreparedSeal: Sendable {
    /// The kit.
    public let kit: EnvelopeKit
    /// The recipient.
    public let recipient: SealingRecipient
    let sharedKey: [UInt8]

    /// The kit prepared for `recipient`; nil if the Diffie-Hellman fails (a recipient key of small order).
    public init?(kit: EnvelopeKit, recipient: SealingRecipient) {
        guard let shared = Sodium.boxSharedKey(public: recipient.curve, secret: kit.ephemeralSecret) else { return nil }
        self.kit = kit
        self.recipient = recipient
        self.sharedKey = shared
    }
}

/// A recipient as one sender seals to it: its X25519 key, converted once from its identity, and the pair's
/// conversation key, for every envelope sealed to it.
public struct SealingRecipient: Sendable, Hashable {
    /// The recipient's identity.
    public let identity: PublicKey
    /// The identity whose inner documents are sealed to it.
    public let sender: PublicKey
    let curve: [UInt8]
    /// Derived from `crypto_box_beforenm` of the recipient's X25519 key and the sender's: what authenticates the
    /// sender's inner documents to the recipient alone (PROTOCOL.md §1.8).
    let conversationKey: [UInt8]

    /// The recipient with this identity, for `sender`'s envelopes; nil if the key is not a valid Ed25519 point
    /// (or is one of small order).
    public init?(_ identity: PublicKey, from sender: DirectMessageKey) {
        guard let curve = Sodium.curve25519PublicKey(ofEd25519: identity.bytes),
            let conversationKey = sender.conversationKey(withCurve: curve)
        else { return nil }
        self.identity = identity
        self.sender = sender.identity
        self.curve = curve
        self.conversationKey = conversationKey
    }
}

/// A node's key for finding the envelopes sealed to it and opening them: the X25519 pair converted from its
/// identity once, so that trying an envelope costs one `crypto_box_seal_open` and nothing else, and the
/// conversation keys of its correspondents, each computed once.
public struct DirectMessageKey: Sendable {
    /// The identity the envelopes are sealed to.
    public let identity: PublicKey
    private let curvePublic: [UInt8]
    private let curveSecret: [UInt8]
    private let conversations = ConversationKeys()

    /// When the inner document's signature is checked.
    public enum SignatureCheck: Sendable {
        /// As it is opened.
        case now
        /// Later, by the caller, before the document is kept (``Document/signatureHolds``): its authenticator
        /// proved its author to this key already, and its signature adds nothing the recipient needs to show it.
        case deferred
    }

    /// The key of `identity`'s holder.
    public init(_ identity: SigningKey) {
        self.identity = identity.publicKey
        (curvePublic, curveSecret) = identity.curve25519KeyPair()
    }

    /// What `envelope` holds for this key: nothing when it is sealed to someone else (the cost of trying is one
    /// failed `crypto_box_seal_open`), else the inner document once every rule, its authenticator and (unless
    /// `signature` defers it) its signature hold.
    public func open(_ envelope: SealedBox, signature: SignatureCheck = .now) -> OpenedEnvelope {
        guard let padded = Sodium.openSealed(envelope.box, curvePublic: curvePublic, curveSecret: curveSecret) else {
            return .notForThisKey
        }
        guard let plaintext = Sodium.unpad(padded, blockSize: padded.count),
            plaintext.count > DirectSpace.authenticatorBytes
        else { return .invalid(.notAPaddedSize(field: "box", size: padded.count)) }
        let tag = plaintext[..<DirectSpace.authenticatorBytes]
        let bytes = Array(plaintext[DirectSpace.authenticatorBytes...])
        let parsed: UnverifiedDocument
        do { parsed = try UnverifiedDocument(parsing: bytes) } catch { return .invalid(error) }
        guard isAddressedHere(parsed) else { return .invalid(.wrongType(field: "inner kind or recipient")) }
        guard let key = conversationKey(with: parsed.author), Sodium.isAuthenticator(tag, of: bytes[...], key: key)
        else { return .invalid(.badAuthenticator) }
        guard Self.photoMatches(parsed.body, envelope.photo) else { return .invalid(.photoMismatch) }
        let inner: Document
        switch signature {
        case .now:
            do { inner = try parsed.verified() } catch { return .invalid(error) }
        case .deferred: inner = Document(unverified: parsed)
        }
        switch inner.body {
        case .direct(let direct): return .direct(inner, direct)
        case .receipt(let receipt): return .receipt(inner, receipt)
        case .channel, .message, .report, .retract, .profile, .sealed, .unknown:
            return .invalid(.wrongType(field: "inner kind or recipient"))
        }
    }

    /// Whether the envelope names a photo exactly when the inner document is a photo message, and the same one: a
    /// message may name only the photo whose bytes its envelope's stamp paid for, and that every relay fetched.
    static func photoMatches(_ inner: DocumentBody, _ named: SealedPhotoReference?) -> Bool {
        guard case .direct(let direct) = inner, case .photo(let hash) = direct.content else { return named == nil }
        return named?.hash == hash
    }

    /// Whether `inner` is a `direct` or `receipt` for this key's identity from another one.
    private func isAddressedHere(_ inner: UnverifiedDocument) -> Bool {
        switch inner.body {
        case .direct(let direct): direct.recipient == identity && inner.author != identity
        case .receipt(let receipt): receipt.recipient == identity && inner.author != identity
        case .channel, .message, .report, .retract, .profile, .sealed, .unknown: false
        }
    }

    /// The conversation key of this identity and `correspondent` (the same from both sides); nil if the
    /// correspondent's key is not a valid point, or of small order.
    public func conversationKey(with correspondent: PublicKey) -> [UInt8]? {
        if let known = conversations.key(for: correspondent) { return known }
        guard let curve = Sodium.curve25519PublicKey(ofEd25519: correspondent.bytes),
            let key = conversationKey(withCurve: curve)
        else { return nil }
        conversations.remember(key, for: correspondent)
        return key
    }

    /// The conversation key with a correspondent's X25519 key: BLAKE2b-256 of ``DirectSpace/authenticatorLabel``
    /// keyed with `crypto_box_beforenm` of the two keys, so that it serves the authenticator and nothing else.
    func conversationKey(withCurve curve: [UInt8]) -> [UInt8]? {
        Sodium.boxSharedKey(public: curve, secret: curveSecret).map {
            Sodium.keyedHash(DirectSpace.authenticatorLabel, key: $0)
        }
    }
}

/// What an envelope holds for one key.
public enum OpenedEnvelope: Sendable, Equatable {
    /// It is sealed to another key (or altered): all a relay ever learns.
    case notForThisKey
    /// It is sealed to this key but what it holds breaks a rule, is not signed by its author, or is not addressed
    /// to this key's identity (a message re-sealed by someone else): dropped.
    case invalid(DocumentError)
    /// A direct message for this key's identity, from the inner document's author.
    case direct(Document, DirectMessage)
    /// A receipt for this key's identity: its author read these of the identity's messages.
    case receipt(Document, Receipt)
}
