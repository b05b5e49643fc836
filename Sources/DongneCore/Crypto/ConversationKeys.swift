import Synchronization

/// The conversation keys a ``DirectMessageKey`` computed, by correspondent: one X25519 each, computed once. At most
/// ``limit``; when full, it starts again (an identity is free to make, so a stranger can make it compute keys, but
/// never hold more than this many).
final class ConversationKeys: Sendable {
    /// The most keys kept.
    static let limit = 4_096
    private let keys = Mutex<[PublicKey: [UInt8]]>([:])

    /// The key for `correspondent`, if computed before.
    func key(for correspondent: PublicKey) -> [UInt8]? { keys.withLock { $0[correspondent] } }

    /// Keeps `key` for `correspondent`.
    func remember(_ key: [UInt8], for correspondent: PublicKey) {
        keys.withLock { keys in
            if keys.count >= Self.limit { keys.removeAll() }
            keys[correspondent] = key
        }
    }
}
