import DongneCore

/// The fixed keys the vectors are made with. Their seeds are in the vector file, so anyone can sign again.
enum VectorKeys {
    /// Seed bytes 0x00…0x1f.
    static let alice = key(startingAt: 0x00)
    /// Seed bytes 0x20…0x3f.
    static let bob = key(startingAt: 0x20)
    /// Seed bytes 0x40…0x5f.
    static let carol = key(startingAt: 0x40)
    /// Seeds of the ephemeral X25519 keys of the direct-message vector: bytes 0x60…0x7f and 0x80…0x9f.
    static let ephemeralSeeds = (recipient: seed(startingAt: 0x60), author: seed(startingAt: 0x80))

    static let named: [(name: String, key: SigningKey)] = [("alice", alice), ("bob", bob), ("carol", carol)]

    static func seed(startingAt first: UInt8) -> [UInt8] { (0..<32).map { first + UInt8($0) } }

    private static func key(startingAt first: UInt8) -> SigningKey { SigningKey(seed: seed(startingAt: first))! }
}
