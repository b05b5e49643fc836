import DongneCore
import DongneStore
import Foundation  // ProcessInfo
import Synchronization

/// The node's signing key with its stamp (PROTOCOL.md §1.13), made stronger before the user's posts in a channel
/// outgrow what the stamp lets peers store.
///
/// The stamp is mined once per identity and kept in the store's settings. Each bit of strength beyond the
/// network's required one doubles the author's quota per channel, so a person who writes a great deal in one
/// channel pays, in the background, the same work per byte as anyone: past half the quota a `dongne-stamp`
/// thread at background priority looks for a stamp one bit stronger; should the quota be reached first, a post
/// waits for it rather than be declined by every peer. Beyond ``strongestUseful`` nothing more is looked for.
final class StampedIdentity: Sendable {
    /// The settings key of the stamp: the key it belongs to (32 bytes), then the stamp (8).
    static let setting = "identity-stamp"

    private let key: Mutex<SigningKey>
    private let strengthening = Mutex<Task<Bool, Never>?>(nil)
    private let policy: AdmissionPolicy
    private let store: Store
    /// Searches in the background, cancelled when the node stops.
    private let miner = StampMiner()

    /// The strength beyond which a stamp buys no more quota (PROTOCOL.md §1.13).
    var strongestUseful: Int {
        min(IdentityStamp.maximumUsefulStrength, policy.requiredStampStrength + AdmissionPolicy.maximumQuotaDoublings)
    }

    /// The key as it signs now.
    var current: SigningKey { key.withLock { $0 } }

    private init(key: SigningKey, policy: AdmissionPolicy, store: Store) {
        self.key = Mutex(key)
        self.policy = policy
        self.store = store
    }

    /// `key` with its stamp from `store`, or with a new one of the required strength mined on every core (a few
    /// seconds on a laptop, once) and kept.
    static func load(_ key: SigningKey, policy: AdmissionPolicy, store: Store) async throws -> StampedIdentity {
        let required = policy.requiredStampStrength
        if let saved = try store.setting(setting), saved.count == 40, Array(saved.prefix(32)) == key.publicKey.bytes,
            let stamp = IdentityStamp(Array(saved.suffix(8))), stamp.strength(for: key.publicKey) >= required
        {
            return StampedIdentity(key: key.stamped(stamp), policy: policy, store: store)
        }
        let lanes = ProcessInfo.processInfo.activeProcessorCount
        // Never cancelled: nothing else runs until the node has its stamp.
        let stamp = await StampMiner().mine(for: key.publicKey, strength: required, lanes: lanes)!
        try await store.setSetting(setting, to: key.publicKey.bytes + stamp.bytes)
        return StampedIdentity(key: key.stamped(stamp), policy: policy, store: store)
    }

    /// Whether `key`'s stamp lets peers store `bytes` more of this user's in `channel`. Past half of what it
    /// allows, a stronger stamp is searched for in the background.
    func allows(_ bytes: Int, in channel: ChannelID?, signedBy key: SigningKey) -> Bool {
        let strength = key.stampStrength
        guard strength < strongestUseful else { return true }
        let used = (try? store.authorBytes(by: key.publicKey, in: channel)) ?? 0
        let quota = policy.quota(forStrength: strength)
        if used + bytes > quota / 2 { _ = strengthen(beyond: strength) }
        return used + bytes <= quota
    }

    /// Waits until the stamp lets peers store `bytes` more in `channel` (or is as strong as any need be, or the
    /// node stops).
    func strengthen(toAllow bytes: Int, in channel: ChannelID?) async {
        while !allows(bytes, in: channel, signedBy: current) {
            guard await strengthen(beyond: current.stampStrength).value else { return }
        }
    }

    /// Stops the search in the background, if one runs.
    func stop() { miner.cancel() }

    /// Looks for a stamp stronger than `strength` on a background thread, unless a search is running; the
    /// search, to await: true once the key is stronger, false if the search was stopped.
    private func strengthen(beyond strength: Int) -> Task<Bool, Never> {
        strengthening.withLock { running in
            if let running { return running }
            let publicKey = current.publicKey
            let task = Task { [self] in
                defer { strengthening.withLock { $0 = nil } }
                guard let stamp = await miner.mine(for: publicKey, strength: strength + 1, lanes: 1) else {
                    return false
                }
                try? await store.setSetting(Self.setting, to: publicKey.bytes + stamp.bytes)
                key.withLock { key in
                    if stamp.strength(for: publicKey) > key.stampStrength { key = key.stamped(stamp) }
                }
                return true
            }
            running = task
            return task
        }
    }
}
