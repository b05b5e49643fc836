/// An Ed25519 public key: the identity of an author. Display names are labels; this is who someone is.
public struct PublicKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 32 key bytes.
    public let raw: Bytes32

    /// The key with these 32 bytes; nil for any other length.
    public init?(_ bytes: some Collection<UInt8>) {
        guard let raw = Bytes32(bytes) else { return nil }
        self.raw = raw
    }

    /// The key with these bytes.
    public init(raw: Bytes32) { self.raw = raw }

    /// The key bytes.
    public var bytes: [UInt8] { raw.bytes }

    /// The fingerprint people read and compare (see ``Fingerprint``).
    public var fingerprint: Fingerprint { Fingerprint(self) }

    /// The short fingerprint, so logs and debug output never show more of a key than people need.
    public var description: String { fingerprint.short }

    /// Orders keys bytewise.
    public static func < (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.raw < rhs.raw }

    /// True when `signature` is this key's Ed25519 signature of `message`.
    public func isValidSignature(_ signature: Signature, of message: [UInt8]) -> Bool {
        Sodium.verify(signature.bytes, message: message, publicKey: bytes)
    }
}

/// A 64-byte Ed25519 signature.
public struct Signature: Hashable, Sendable {
    /// The signature bytes.
    public let bytes: [UInt8]

    /// The signature with these bytes; nil unless there are exactly 64.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 64 else { return nil }
        self.bytes = bytes
    }
}

/// An Ed25519 key pair that signs documents on behalf of its holder.
///
/// The secret never appears in `description`, `debugDescription` or string interpolation; only the seed, kept by
/// the store in a 0600 file, can bring it back.
public struct SigningKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The public half: the author key that goes into every document this key signs.
    public let publicKey: PublicKey
    /// The proof of work this key puts in every document it signs (``IdentityStamp``); nil signs without one,
    /// which only networks that ask for no work accept.
    public private(set) var stamp: IdentityStamp?
    private let seed: [UInt8]
    private let secretKey: [UInt8]

    /// The key pair derived from a 32-byte seed, signing with `stamp`; nil for a seed of any other length.
    public init?(seed: [UInt8], stamp: IdentityStamp? = nil) {
        guard seed.count == 32 else { return nil }
        self.stamp = stamp
        let pair = Sodium.signKeyPair(seed: seed)
        self.seed = seed
        self.secretKey = pair.secretKey
        self.publicKey = PublicKey(pair.publicKey)!
    }

    /// A new key pair from the operating system's secure random source.
    public static func generate() -> SigningKey {
        var seed = Sodium.randomBytes(32)
        defer { Sodium.wipe(&seed) }
        return SigningKey(seed: seed)!
    }

    /// The same key, signing with `stamp` from now on.
    public func stamped(_ stamp: IdentityStamp) -> SigningKey {
        var key = self
        key.stamp = stamp
        return key
    }

    /// The strength of this key's stamp (0 without one).
    public var stampStrength: Int { IdentityStamp.strength(of: stamp, for: publicKey) }

    /// The 32-byte seed, for the caller that persists the identity; never log it.
    public var seedBytes: [UInt8] { seed }

    /// The Ed25519 signature of `message`.
    public func sign(_ message: [UInt8]) -> Signature {
        Signature(Sodium.sign(message, secretKey: secretKey))!
    }

    /// The X25519 key pair converted from this key, for opening what is sealed to it many times over.
    func curve25519KeyPair() -> (publicKey: [UInt8], secretKey: [UInt8]) {
        // An Ed25519 key made by libsodium always converts.
        Sodium.curve25519KeyPair(publicKey: publicKey.bytes, secretKey: secretKey)!
    }

    /// Names the key by its short fingerprint only.
    public var description: String { "SigningKey(\(publicKey.fingerprint.short))" }
    /// The same as ``description``: debug output never shows the secret either.
    public var debugDescription: String { description }
    /// Only the public key, so `dump` and debuggers cannot print the seed or the secret key.
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKey]) }
}
