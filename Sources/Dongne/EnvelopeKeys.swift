import DongneCore
import Foundation  // ProcessInfo
import Synchronization

/// The one-time keys that sign this node's envelopes (PROTOCOL.md §1.8), each stamped at the envelope strength
/// so that peers take it. A stamp takes 2^strength hashes (about 60 ms of one core on the default network), so
/// a few keys are kept ready, found in the background: sending a direct message does not wait for one.
final class EnvelopeKeys: Sendable {
    /// How many stamped keys are kept ready.
    static let kept = 2

    private let strength: Int
    private let ready = Mutex<(keys: [SigningKey], refilling: Bool)>(([], false))
    private let miner = StampMiner()

    /// Keys stamped at `strength` (0: no stamp, no search).
    init(strength: Int) { self.strength = strength }

    /// A fresh stamped key, used for one envelope only; a ready one if there is one (and another is found in
    /// its place), else one found now on every core.
    func take() async -> SigningKey {
        guard strength > 0 else { return .generate() }
        let key = ready.withLock { $0.keys.popLast() }
        refill()
        if let key { return key }
        return await mine(lanes: ProcessInfo.processInfo.activeProcessorCount) ?? .generate()
    }

    /// Starts finding keys until ``kept`` are ready, on one `dongne-stamp` thread at a time.
    func refill() {
        guard strength > 0 else { return }
        let start = ready.withLock { state -> Bool in
            guard !state.refilling, state.keys.count < Self.kept else { return false }
            state.refilling = true
            return true
        }
        guard start else { return }
        Task(priority: .background) {
            while let key = await mine(lanes: 1) {
                let full = ready.withLock { state -> Bool in
                    state.keys.append(key)
                    if state.keys.count >= Self.kept { state.refilling = false }
                    return !state.refilling
                }
                if full { return }
            }
            ready.withLock { $0.refilling = false }
        }
    }

    /// Stops every search: keys not found yet are not looked for any more.
    func stop() { miner.cancel() }

    /// A new key with a stamp of the envelope strength; nil once stopped.
    private func mine(lanes: Int) async -> SigningKey? {
        let key = SigningKey.generate()
        guard let stamp = await miner.mine(for: key.publicKey, strength: strength, lanes: lanes) else { return nil }
        return key.stamped(stamp)
    }
}
