import DongneCore
import DongneSystem
import Foundation  // ProcessInfo
import Synchronization

/// What this node seals its envelopes with (PROTOCOL.md §1.8), made ahead of need so that a direct message's way
/// out holds only what depends on it: kits of a one-time key, stamped at the envelope strength, and an ephemeral
/// key pair (a stamp takes 2^strength hashes, about 60 ms of one core on the default network); each
/// correspondent's X25519 key, converted once; and, for each correspondent written to, the next envelope's
/// Diffie-Hellman, done in the background after each message, since conversations go on.
final class EnvelopeKeys: Sendable {
    /// How many kits are kept ready.
    static let kept = 4
    /// How many correspondents' converted keys are kept.
    static let maximumRecipients = 256

    /// This node's key: what its envelopes' inner documents are authenticated with.
    private let key: DirectMessageKey
    private let strength: Int
    /// Where kits without stamps and prepared seals are made: the node's background thread, off a message's way.
    private let queue: BackgroundQueue
    private let ready = Mutex<(kits: [EnvelopeKit], refilling: Bool)>(([], false))
    private let recipients = Mutex<[PublicKey: SealingRecipient]>([:])
    private let prepared = Mutex<[PublicKey: PreparedSeal]>([:])
    private let miner = StampMiner()

    /// Kits whose keys are stamped at `strength` (0: no stamp, no search), made on `queue` (stamps on their own
    /// threads).
    init(key: DirectMessageKey, strength: Int, queue: BackgroundQueue) {
        self.key = key
        self.strength = strength
        self.queue = queue
    }

    /// A kit for one envelope: a ready one if there is one (and another is made in its place), else one made
    /// now, its stamp searched on every core.
    func take() async -> EnvelopeKit {
        let kit = ready.withLock { $0.kits.popLast() }
        refill()
        if let kit { return kit }
        return EnvelopeKit(wrapper: await newKey(lanes: ProcessInfo.processInfo.activeProcessorCount) ?? .generate())
    }

    /// A seal for one envelope to `identity`: the one prepared after the last message to them if there is one,
    /// else prepared now; the next is prepared in the background. Nil if `identity` is not a valid point.
    func seal(for identity: PublicKey) async -> PreparedSeal? {
        if let ready = prepared.withLock({ $0.removeValue(forKey: identity) }) {
            prepareNext(for: ready.recipient)
            return ready
        }
        guard let recipient = recipient(identity) else { return nil }
        let kit = await take()
        prepareNext(for: recipient)
        return PreparedSeal(kit: kit, recipient: recipient)
    }

    /// A seal for one envelope to `identity` whose one-time key is stamped `extraBits` stronger than the envelope
    /// strength (an envelope that names a photo: ``DirectSpace/photoStampBits(photoSize:)``), searched now on every
    /// core. Nil if `identity` is not a valid point, or the node stops meanwhile.
    func seal(for identity: PublicKey, extraBits: Int) async -> PreparedSeal? {
        guard extraBits > 0 else { return await seal(for: identity) }
        guard let recipient = recipient(identity),
            let wrapper = await newKey(lanes: ProcessInfo.processInfo.activeProcessorCount, extraBits: extraBits)
        else { return nil }
        return PreparedSeal(kit: EnvelopeKit(wrapper: wrapper), recipient: recipient)
    }

    /// Prepares the next seal for `recipient` on the background thread, from a ready kit (or a new one, when no
    /// stamp is asked): when none is ready, the next message prepares its own.
    private func prepareNext(for recipient: SealingRecipient) {
        queue.execute { [self] in
            let kit = ready.withLock { $0.kits.popLast() } ?? (strength == 0 ? EnvelopeKit(wrapper: .generate()) : nil)
            refill()
            guard let kit, let next = PreparedSeal(kit: kit, recipient: recipient) else { return }
            prepared.withLock { prepared in
                if prepared.count >= Self.maximumRecipients { prepared.removeAll() }
                prepared[recipient.identity] = next
            }
        }
    }

    /// `identity`'s converted key; nil if it is not a valid Ed25519 point.
    func recipient(_ identity: PublicKey) -> SealingRecipient? {
        if let known = recipients.withLock({ $0[identity] }) { return known }
        guard let recipient = SealingRecipient(identity, from: key) else { return nil }
        recipients.withLock { recipients in
            if recipients.count >= Self.maximumRecipients { recipients.removeAll() }
            recipients[identity] = recipient
        }
        return recipient
    }

    /// Starts making kits until ``kept`` are ready, one at a time, in the background (on the background thread,
    /// or with stamps on one `dongne-stamp` thread).
    func refill() {
        let start = ready.withLock { state -> Bool in
            guard !state.refilling, state.kits.count < Self.kept else { return false }
            state.refilling = true
            return true
        }
        guard start else { return }
        guard strength > 0 else {
            return queue.execute { [self] in
                ready.withLock { state in
                    while state.kits.count < Self.kept { state.kits.append(EnvelopeKit(wrapper: .generate())) }
                    state.refilling = false
                }
            }
        }
        Task {
            while let key = await newKey(lanes: 1) {
                let full = ready.withLock { state -> Bool in
                    state.kits.append(EnvelopeKit(wrapper: key))
                    if state.kits.count >= Self.kept { state.refilling = false }
                    return !state.refilling
                }
                if full { return }
            }
            ready.withLock { $0.refilling = false }
        }
    }

    /// Stops every stamp search: kits not made yet are not made any more.
    func stop() { miner.cancel() }

    /// A new key, stamped at the envelope strength (and `extraBits` more); nil once stopped.
    private func newKey(lanes: Int, extraBits: Int = 0) async -> SigningKey? {
        let key = SigningKey.generate()
        guard strength + extraBits > 0 else { return key }
        guard let stamp = await miner.mine(for: key.publicKey, strength: strength + extraBits, lanes: lanes)
        else { return nil }
        return key.stamped(stamp)
    }
}
