import DongneCore
import DongneStore
import DongneSystem
import Foundation  // Thread
import Synchronization

/// The node's signing key with its stamp (PROTOCOL.md §1.13), made stronger before the user's posts in a channel
/// outgrow what the stamp lets peers store.
///
/// The stamp is mined once per identity and kept in the store's settings. Each bit of strength beyond the
/// network's required one doubles the author's quota per channel, so a person who writes a great deal in one
/// channel pays, in the background, the same work per byte as anyone: past half the quota a `dongne-stamp`
/// thread at idle priority looks for a stamp one bit stronger; should the quota be reached first, a post waits
/// for it rather than be declined by every peer.
final class StampedIdentity: Sendable {
    /// The settings key of the stamp: the key it belongs to (32 bytes), then the stamp (8).
    static let setting = "identity-stamp"

    private let key: Mutex<SigningKey>
    private let strengthening = Mutex<Task<Void, Never>?>(nil)
    private let policy: AdmissionPolicy
    private let store: Store

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
        let stamp = await mine(for: key.publicKey, strength: required, lanes: ProcessInfo.processInfo.activeProcessorCount)
        try await store.setSetting(setting, to: key.publicKey.bytes + stamp.bytes)
        return StampedIdentity(key: key.stamped(stamp), policy: policy, store: store)
    }

    /// Whether the current key's stamp lets peers store `bytes` more of this user's in `channel`. Past half of
    /// what it allows, a stronger stamp is searched for in the background.
    func allows(_ bytes: Int, in channel: ChannelID?) -> Bool {
        let key = current
        guard key.stampStrength < IdentityStamp.maximumUsefulStrength else { return true }
        let used = (try? store.authorBytes(by: key.publicKey, in: channel)) ?? 0
        let quota = policy.quota(forStrength: key.stampStrength)
        if used + bytes > quota / 2 { _ = strengthen(beyond: key.stampStrength) }
        return used + bytes <= quota
    }

    /// Waits until the stamp lets peers store `bytes` more in `channel` (or is as strong as any need be).
    func strengthen(toAllow bytes: Int, in channel: ChannelID?) async {
        while !allows(bytes, in: channel) { await strengthen(beyond: current.stampStrength).value }
    }

    /// Looks for a stamp stronger than `strength` on an idle-priority thread, unless a search is running; the
    /// search, to await.
    private func strengthen(beyond strength: Int) -> Task<Void, Never> {
        strengthening.withLock { running in
            if let running { return running }
            let publicKey = current.publicKey
            let task = Task { [self] in
                let stamp = await Self.mine(for: publicKey, strength: strength + 1, lanes: 1)
                try? await store.setSetting(Self.setting, to: publicKey.bytes + stamp.bytes)
                key.withLock { key in
                    if stamp.strength(for: publicKey) > key.stampStrength { key = key.stamped(stamp) }
                }
                strengthening.withLock { $0 = nil }
            }
            running = task
            return task
        }
    }

    /// The stamp ``IdentityStamp/mine(for:strength:)`` finds (the first counter from 0 that is strong enough),
    /// searched on `lanes` `dongne-stamp` threads at once.
    ///
    /// The counters are searched in rounds of `lanes` × 16,384, each lane taking every `lanes`-th counter of a
    /// round. A lane that finds one stops, and the others stop once past that round: the smallest counter any of
    /// them found is then the first of all, whichever lane was quickest.
    static func mine(for author: PublicKey, strength: Int, lanes: Int) async -> IdentityStamp {
        let lanes = UInt64(max(1, lanes))
        let batch: UInt64 = 1 << 14
        let search = Mutex<(firstRound: UInt64?, found: [UInt64], running: UInt64)>((nil, [], lanes))
        return await withCheckedContinuation { continuation in
            for lane in 0..<lanes {
                Thread {
                    prepareBackgroundThread(named: "dongne-stamp")
                    var round: UInt64 = 0
                    var found: UInt64?
                    while found == nil, search.withLock({ $0.firstRound.map { round <= $0 } ?? true }) {
                        found = IdentityStamp.search(
                            for: author, strength: strength, first: round &* batch &* lanes &+ lane, stride: lanes,
                            count: batch
                        ).map { $0.bytes.reduce(0) { $0 << 8 | UInt64($1) } }
                        if found == nil { round &+= 1 }
                    }
                    let last = search.withLock { search -> UInt64? in
                        if let found {
                            search.found.append(found)
                            search.firstRound = min(search.firstRound ?? round, round)
                        }
                        search.running -= 1
                        return search.running == 0 ? search.found.min() : nil
                    }
                    if let last { continuation.resume(returning: IdentityStamp(counter: last)) }
                }.start()
            }
        }
    }
}
