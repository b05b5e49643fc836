import DongneCore

/// The fixed keys the vectors are made with. Their seeds are in the vector file, so anyone can sign again.
///
/// Each key carries the stamp of the default network's strength (``IdentityStamp/defaultRequiredStrength``):
/// the first counter from 0 that makes one, found once by ``IdentityStamp/mine(for:strength:)`` (tens of
/// millions of hashes) and written down here so the vectors are made in a moment. Bob's happens to be stronger.
enum VectorKeys {
    /// Seed bytes 0x00…0x1f; a stamp of strength 24.
    static let alice = key(startingAt: 0x00, stampCounter: 17_550_736)
    /// Seed bytes 0x20…0x3f; a stamp of strength 26.
    static let bob = key(startingAt: 0x20, stampCounter: 51_132_611)
    /// Seed bytes 0x40…0x5f; a stamp of strength 24.
    static let carol = key(startingAt: 0x40, stampCounter: 19_033_274)
    /// Seeds of the ephemeral X25519 keys of the three envelope vectors: bytes 0x60…0x7f, 0x80…0x9f and 0xe0…0xff.
    static let ephemeralSeeds = (
        recipient: seed(startingAt: 0x60), author: seed(startingAt: 0x80), photo: seed(startingAt: 0xe0)
    )
    /// The one-time key that signs the envelope vectors: seed bytes 0xa0…0xbf, with the first stamp of the
    /// strength the default network asks of envelopes (a quick search).
    static let wrapper: SigningKey = {
        let key = SigningKey(seed: seed(startingAt: 0xa0))!
        let strength = DirectSpace.envelopeStampStrength(required: IdentityStamp.defaultRequiredStrength)
        return key.stamped(IdentityStamp.mine(for: key.publicKey, strength: strength))
    }()
    /// The key of the direct photo vector's encrypted chunks: bytes 0xc0…0xdf.
    static let photoKey = seed(startingAt: 0xc0)
    /// The one-time key that signs the envelope of the direct photo vector: seed bytes 0x10…0x2f, with the first
    /// stamp of the strength the default network asks of an envelope naming that photo (four bits more than
    /// ``wrapper``'s; found once and written down here).
    static let photoWrapper = key(startingAt: 0x10, stampCounter: photoWrapperStampCounter)
    static let photoWrapperStampCounter: UInt64 = 6_119_639

    static let named: [(name: String, key: SigningKey)] = [("alice", alice), ("bob", bob), ("carol", carol)]

    static func seed(startingAt first: UInt8) -> [UInt8] { (0..<32).map { first + UInt8($0) } }

    private static func key(startingAt first: UInt8, stampCounter: UInt64) -> SigningKey {
        SigningKey(seed: seed(startingAt: first), stamp: IdentityStamp(counter: stampCounter))!
    }
}
