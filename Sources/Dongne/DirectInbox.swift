import DongneCore
import DongneStore
import DongneSystem
import Synchronization

/// Finds this user's direct messages and receipts among the envelopes the node stores (PROTOCOL.md §1.8): each
/// new envelope is tried with the user's key — trial decryption, one failed `crypto_box_seal_open` for each
/// envelope that is someone else's — on the node's background thread, after it was stored and relayed, so it
/// never slows relaying. Envelopes are tried in the order they were stored, and how far is stored with what was
/// found, so that none is skipped or tried twice across restarts.
final class DirectInbox: Sendable {
    /// Envelopes read and tried per step.
    static let batch = 512
    /// Most envelopes remembered as tried on arrival and not the user's, until a pass passes them.
    static let maximumTriedOnArrival = 4_096

    private let key: DirectMessageKey
    private let store: Store
    private let queue: BackgroundQueue
    /// The messages opened on arrival, shown until a pass keeps them.
    private let arriving: ArrivingDirectMessages
    /// How long after an envelope is stored the pass that keeps it runs: those stored meanwhile share it, so that
    /// a busy conversation costs the store one write per pass rather than one per message (each was shown from
    /// memory as it arrived).
    static let passDelay: Duration = .milliseconds(100)

    /// Whether a pass is scheduled, whether one runs, and whether envelopes came while it ran (then it runs once
    /// more).
    private let state = Mutex<(scheduled: Bool, running: Bool, again: Bool)>((false, false, false))
    /// Envelopes tried on arrival that were someone else's: a pass does not try them again.
    private let triedOnArrival = Mutex<Set<DocumentID>>([])

    /// Whether the user sends read receipts, asked at each pass.
    private let sendsReceipts: @Sendable () -> Bool

    init(
        key: DirectMessageKey, store: Store, queue: BackgroundQueue, arriving: ArrivingDirectMessages,
        sendsReceipts: @escaping @Sendable () -> Bool
    ) {
        self.key = key
        self.store = store
        self.queue = queue
        self.arriving = arriving
        self.sendsReceipts = sendsReceipts
    }

    /// Tries envelopes as they arrive, before their own checks, so that a message for the user shows as soon as a
    /// channel message would: one that opens with the user's key and whose authenticator holds (so it is its
    /// author's, whoever relayed it) is held in ``ArrivingDirectMessages`` until its envelope's checks and its
    /// own signature's (``openOnArrival(_:)``) and a pass keep it. Every envelope costs one
    /// `crypto_box_seal_open` here, whoever it is for. The envelopes whose messages are held.
    func openBeforeCheck(_ envelopes: [UnverifiedDocument]) -> [DocumentID] {
        var held: [DocumentID] = []
        for envelope in envelopes {
            guard case .sealed(let box) = envelope.body else { continue }
            switch key.open(box, signature: .deferred) {
            case .direct(let message, _):
                arriving.addUnchecked(message, envelope: envelope.id)
                held.append(envelope.id)
            case .notForThisKey, .invalid: noteTried(envelope.id)
            case .receipt: continue
            }
        }
        return held
    }

    /// Envelopes that passed their checks: those tried before them are settled (a held message is checked now if
    /// its own signature holds too, else it stays unchecked and leaves); the others are tried now, and a message
    /// among them is held. Whether any was. Receipts wait for the pass.
    func openOnArrival(_ envelopes: [Document]) -> Bool {
        var opened = false
        for envelope in envelopes {
            guard case .sealed(let box) = envelope.body else { continue }
            if let held = arriving.uncheckedMessage(carriedBy: envelope.id) {
                if held.signatureHolds { arriving.checked(envelope: envelope.id) }
                continue
            }
            if triedOnArrival.withLock({ $0.contains(envelope.id) }) { continue }
            switch key.open(box) {
            case .direct(let message, _):
                arriving.add(message, envelope: envelope.id)
                opened = true
            case .notForThisKey, .invalid: noteTried(envelope.id)
            case .receipt: continue
            }
        }
        return opened
    }

    /// Remembers that an envelope was tried and is someone else's, so that no pass tries it again.
    private func noteTried(_ envelope: DocumentID) {
        triedOnArrival.withLock { tried in
            if tried.count >= Self.maximumTriedOnArrival { tried.removeAll() }
            tried.insert(envelope)
        }
    }

    /// `schedule` runs its work after a delay (the node's loop timer).
    func envelopesStored(
        schedule: (Duration, @escaping @Sendable () -> Void) -> Void, changed: @escaping @Sendable () async -> Void
    ) {
        let first = state.withLock { state -> Bool in
            defer { state.scheduled = true }
            return !state.scheduled
        }
        guard first else { return }
        schedule(Self.passDelay) { [self] in
            state.withLock { $0.scheduled = false }
            run(changed: changed)
        }
    }

    private func run(changed: @escaping @Sendable () async -> Void) {
        let start = state.withLock { state -> Bool in
            if state.running { state.again = true }
            defer { state.running = true }
            return !state.running
        }
        guard start else { return }
        Task {
            repeat {
                if (try? await pass()) == true { await changed() }
            } while state.withLock { state -> Bool in
                state.running = state.again
                state.again = false
                return state.running
            }
        }
    }

    /// Tries every envelope stored and not tried yet, before the node starts its network (nothing else runs a pass
    /// then): those of a run that stopped before its pass, before expiry can delete them.
    func catchUp() async { _ = try? await pass() }

    /// Tries every envelope not tried yet; whether anything was found that changes a conversation.
    private func pass() async throws(StoreError) -> Bool {
        var tried = try store.envelopesTried()
        var changed = false
        while true {
            let envelopes = try store.envelopes(after: tried, limit: Self.batch)
            guard let last = envelopes.last?.sequence else { return changed }
            var mail = OpenedMail()
            var held: [DocumentID] = []
            var untried: [SealedBox] = []
            for envelope in envelopes {
                // A held message whose checks passed (its envelope's and its own signature); one still unchecked is
                // opened again here with its signature checked, whatever happens to it on the loop meanwhile.
                if let message = arriving.checkedMessage(carriedBy: envelope.id) {
                    mail.messages.append(message)
                    held.append(envelope.id)
                } else if triedOnArrival.withLock({ $0.remove(envelope.id) == nil }) {
                    untried.append(envelope.box)
                }
            }
            let opened = await open(untried)
            mail.messages += opened.messages
            mail.receipts += opened.receipts
            var readBefore: [DocumentID: UInt64] = [:]
            for message in mail.messages { readBefore[message.id] = arriving.readTime(of: message.id) }
            let kept = try await store.keepOpened(
                mail, triedThrough: last, readBefore: readBefore, sendingReceipts: sendsReceipts())
            if kept { changed = true }
            // Read while the write was on its way: read in the store too, before the held copies go.
            let readMeanwhile = mail.messages.compactMap { message -> (DocumentID, UInt64)? in
                guard readBefore[message.id] == nil, let time = arriving.readTime(of: message.id) else { return nil }
                return (message.id, time)
            }
            for (id, time) in readMeanwhile {
                if try await !store.markRead([id], at: time, sendingReceipts: sendsReceipts()).isEmpty { changed = true }
            }
            if arriving.remove(carriedBy: held) { changed = true }
            tried = last
            if envelopes.count < Self.batch { return changed }
        }
    }

    /// What the envelopes hold for this user, opened on the background thread.
    private func open(_ boxes: [SealedBox]) async -> OpenedMail {
        await withCheckedContinuation { continuation in
            queue.execute { [key] in
                var mail = OpenedMail()
                for box in boxes {
                    switch key.open(box) {
                    case .direct(let document, _): mail.messages.append(document)
                    case .receipt(let document, let receipt):
                        mail.receipts.append((document.author, receipt.read, document.created))
                    case .notForThisKey, .invalid: continue
                    }
                }
                continuation.resume(returning: mail)
            }
        }
    }
}
