/// Sealing a `direct` or `receipt` document into an envelope of the direct-message space (PROTOCOL.md §1.8).
///
/// The inner document, signed by its author's identity, is padded to one of ``DirectSpace/paddedSizes`` and
/// sealed with `crypto_box_seal` to the recipient's X25519 key (converted from its Ed25519 identity). The
/// envelope is a `sealed` document signed by a one-time key and dated by the hour: nothing in it is stable
/// across envelopes, so relays can neither tell who sent it or to whom, nor link two of one conversation.
public enum SealedEnvelope {
    /// Seals `inner` to `recipient` in an envelope signed by `wrapper`, a fresh key used for this envelope only
    /// (stamped as ``DirectSpace/envelopeStampStrength(required:)`` asks), dated by the hour of `now`.
    public static func seal(
        _ inner: Document, to recipient: PublicKey, wrapper: SigningKey, at now: UInt64
    ) throws(DocumentError) -> Document {
        guard let recipient = SealingRecipient(recipient) else { throw .recipientKeyNotAPoint }
        return try seal(inner, to: recipient, kit: EnvelopeKit(wrapper: wrapper), at: now)
    }

    /// Seals `inner` to `recipient` with a kit made ahead of need.
    public static func seal(
        _ inner: Document, to recipient: SealingRecipient, kit: EnvelopeKit, at now: UInt64
    ) throws(DocumentError) -> Document {
        guard let prepared = PreparedSeal(kit: kit, recipient: recipient) else { throw .recipientKeyNotAPoint }
        return try seal(inner, with: prepared, at: now)
    }

    /// Seals `inner` with a seal prepared ahead of need: what a node does on a message's way out, so that only
    /// the box's symmetric encryption and the envelope's signature are left on it.
    public static func seal(_ inner: Document, with prepared: PreparedSeal, at now: UInt64) throws(DocumentError)
        -> Document
    {
        guard inner.kind == .direct || inner.kind == .receipt else { throw .wrongType(field: "kind") }
        guard let padded = pad(inner.bytes) else {
            throw .tooLarge(size: inner.bytes.count, limit: DirectSpace.maximumInnerBytes)
        }
        guard
            let box = Sodium.seal(
                padded, toCurve: prepared.recipient.curve, ephemeralPublic: prepared.kit.ephemeralPublic,
                sharedKey: prepared.sharedKey)
        else { throw .recipientKeyNotAPoint }
        return try Document.sign(
            .sealed(SealedBox(box: box)), created: DirectSpace.envelopeCreated(at: now), by: prepared.kit.wrapper)
    }

    /// Seals with the ephemeral key from a fixed seed: only for reproducible test vectors, since a reused seed
    /// would link the envelopes.
    @_spi(TestVectors)
    public static func seal(
        _ inner: Document, to recipient: PublicKey, wrapper: SigningKey, at now: UInt64, ephemeralSeed: [UInt8]
    ) throws(DocumentError) -> Document {
        guard inner.kind == .direct || inner.kind == .receipt else { throw .wrongType(field: "kind") }
        guard let padded = pad(inner.bytes) else {
            throw .tooLarge(size: inner.bytes.count, limit: DirectSpace.maximumInnerBytes)
        }
        guard let box = Sodium.seal(padded, toEd25519: recipient.bytes, ephemeralSeed: ephemeralSeed) else {
            throw .recipientKeyNotAPoint
        }
        return try Document.sign(.sealed(SealedBox(box: box)), created: DirectSpace.envelopeCreated(at: now), by: wrapper)
    }

    /// Seals bytes already padded, unchecked: only for tests of what a recipient refuses.
    @_spi(TestVectors)
    public static func sealPadded(_ padded: [UInt8], to recipient: PublicKey) throws(DocumentError) -> [UInt8] {
        guard let box = Sodium.seal(padded, toEd25519: recipient.bytes, ephemeralSeed: Sodium.randomBytes(32)) else {
            throw .recipientKeyNotAPoint
        }
        return box
    }

    /// `bytes` padded to the smallest of ``DirectSpace/paddedSizes`` that holds them and the padding's first
    /// byte; nil when none does.
    static func pad(_ bytes: [UInt8]) -> [UInt8]? {
        guard let size = DirectSpace.paddedSizes.first(where: { bytes.count < $0 }) else { return nil }
        return Sodium.pad(bytes, to: size)
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

/// A recipient's X25519 key, converted once from its identity for every envelope sealed to it.
public struct SealingRecipient: Sendable, Hashable {
    /// The recipient's identity.
    public let identity: PublicKey
    let curve: [UInt8]

    /// The recipient with this identity; nil if the key is not a valid Ed25519 point.
    public init?(_ identity: PublicKey) {
        guard let curve = Sodium.curve25519PublicKey(ofEd25519: identity.bytes) else { return nil }
        self.identity = identity
        self.curve = curve
    }
}

/// A node's key for finding the envelopes sealed to it and opening them: the X25519 pair converted from its
/// identity once, so that trying an envelope costs one `crypto_box_seal_open` and nothing else.
public struct DirectMessageKey: Sendable {
    /// The identity the envelopes are sealed to.
    public let identity: PublicKey
    private let curvePublic: [UInt8]
    private let curveSecret: [UInt8]

    /// The key of `identity`'s holder.
    public init(_ identity: SigningKey) {
        self.identity = identity.publicKey
        (curvePublic, curveSecret) = identity.curve25519KeyPair()
    }

    /// What `envelope` holds for this key: nothing when it is sealed to someone else (the cost of trying is one
    /// failed `crypto_box_seal_open`), else the inner document once every rule and its signature hold.
    public func open(_ envelope: SealedBox) -> OpenedEnvelope {
        guard let padded = Sodium.openSealed(envelope.box, curvePublic: curvePublic, curveSecret: curveSecret) else {
            return .notForThisKey
        }
        guard let bytes = Sodium.unpad(padded, blockSize: padded.count) else { return .invalid(.notAPaddedSize(field: "box", size: padded.count)) }
        let inner: Document
        do { inner = try Document(verifying: bytes) } catch { return .invalid(error) }
        switch inner.body {
        case .direct(let direct) where direct.recipient == identity && inner.author != identity:
            return .direct(inner, direct)
        case .receipt(let receipt) where receipt.recipient == identity && inner.author != identity:
            return .receipt(inner, receipt)
        case .channel, .message, .report, .retract, .profile, .direct, .receipt, .sealed, .unknown:
            return .invalid(.wrongType(field: "inner kind or recipient"))
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
