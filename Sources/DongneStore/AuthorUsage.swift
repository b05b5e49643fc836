import DongneCore
import Synchronization

/// How many bytes each author has stored in each channel, for the quota of ``AdmissionPolicy``.
///
/// An author's figure is read from the store the first time the author is seen in a channel, and kept up to date
/// in memory as documents are admitted: bytes are counted when a document passes its checks, before it commits,
/// so a batch cannot slip past the quota between the two; given back when the write finds it stored already, and
/// read again after a write that failed (a failure may come after the commit, from its sync).
final class AuthorUsage: Sendable {
    /// Who, where: `channel` nil for documents outside channels.
    struct Key: Hashable {
        var author: PublicKey
        var channel: ChannelID?

        init(author: PublicKey, channel: ChannelID?) {
            self.author = author
            self.channel = channel
        }

        /// The author and channel of `document`.
        init(_ document: Document) { self.init(author: document.author, channel: document.channel) }

        /// The author and channel `document` claims.
        init(_ document: UnverifiedDocument) { self.init(author: document.author, channel: document.channel) }
    }

    private let bytes = Mutex<[Key: Int]>([:])

    /// Counts `count` more bytes for `key` if they fit in `quota`; `stored` reads the author's bytes from the store
    /// the first time (two first readings at once may both run; the first figure kept wins).
    func take(
        _ count: Int, for key: Key, quota: Int, stored: (Key) throws(StoreError) -> Int
    ) throws(StoreError) -> Bool {
        let used: Int
        if let known = bytes.withLock({ $0[key] }) { used = known } else { used = try stored(key) }
        return bytes.withLock { table in
            let current = table[key] ?? used
            guard count <= quota, current <= quota - count else {
                table[key] = current
                return false
            }
            table[key] = current + count
            return true
        }
    }

    /// Counts `count` more bytes (or fewer, when negative) for `key` whatever the quota (this node's own writes, a
    /// commit that kept less than was admitted), if the key has been seen: otherwise its first reading from the
    /// store counts what was kept.
    func add(_ count: Int, for key: Key) {
        bytes.withLock { table in table[key].map { table[key] = max(0, $0 + count) } }
    }

    /// Forgets the figure of `key`: the next use reads it from the store again (after a write whose outcome is
    /// not known for sure).
    func forget(_ key: Key) { _ = bytes.withLock { $0.removeValue(forKey: key) } }

    /// The bytes counted for `key`, if it has been seen (no reading).
    func known(_ key: Key) -> Int? { bytes.withLock { $0[key] } }

    /// The bytes of `key`, read from the store (by `stored`) the first time.
    func used(_ key: Key, stored: (Key) throws(StoreError) -> Int) throws(StoreError) -> Int {
        if let known = bytes.withLock({ $0[key] }) { return known }
        let read = try stored(key)
        return bytes.withLock { table in
            if let known = table[key] { return known }
            table[key] = read
            return read
        }
    }
}
