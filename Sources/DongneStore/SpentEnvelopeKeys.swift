import DongneCore
import Synchronization

/// The one-time keys of the envelopes this node stored lately (PROTOCOL.md §1.8: a one-time key signs one
/// envelope), so that a second envelope by one of them is declined before its Diffie-Hellman and its signature,
/// for the price of a lookup. Without it, a key whose envelope is committed was recognised only by a store read
/// after the signature: a stranger who paid one stamp could make every node pay both for each reuse.
///
/// At most ``limit`` keys, the oldest forgotten first (an identity costs a stamp, so a flood of fresh keys cannot
/// push many out cheaply); a reuse of a key forgotten, or stored before the node started, is still declined, after
/// its signature, by the store.
final class SpentEnvelopeKeys: Sendable {
    /// The most keys remembered: 16,384 keys, about a megabyte.
    static let limit = 16_384

    private struct Keys {
        var set: Set<PublicKey> = []
        var order: [PublicKey] = []
        var next = 0
    }

    private let keys = Mutex(Keys())

    /// Remembers that `key` signed an envelope that is stored.
    func insert(_ key: PublicKey) {
        keys.withLock { keys in
            guard keys.set.insert(key).inserted else { return }
            if keys.order.count < Self.limit {
                keys.order.append(key)
            } else {
                keys.set.remove(keys.order[keys.next])
                keys.order[keys.next] = key
                keys.next = (keys.next + 1) % Self.limit
            }
        }
    }

    /// Whether `key` is known to have signed a stored envelope.
    func contains(_ key: PublicKey) -> Bool { keys.withLock { $0.set.contains(key) } }
}
