import DongneCore
import DongneStore
import DongneSystem
import Synchronization

/// Direct messages: 1:1 conversations that travel sealed through the direct-message space (PROTOCOL.md §1.8),
/// with a read flag.
extension Node {
    /// The user's conversations, one per correspondent, latest first.
    public var conversations: ConversationListQuery { ConversationListQuery(node: self) }

    /// The conversation with `correspondent`. Nothing is written until a message is sent.
    public func conversation(with correspondent: PublicKey) -> Conversation {
        Conversation(node: self, correspondent: correspondent)
    }

    /// Whether this node sends read receipts (the user's choice, remembered; ``Configuration/sendsReadReceipts``
    /// until they make one).
    public var sendsReadReceipts: Bool {
        Self.sendsReadReceipts(in: store, default: configuration.sendsReadReceipts)
    }

    /// The user's remembered choice in `store`, else `default`.
    static func sendsReadReceipts(in store: Store, default: Bool) -> Bool {
        (try? store.setting(receiptsSetting)).flatMap(\.first).map { $0 == 1 } ?? `default`
    }

    /// Turns read receipts on or off, and remembers it. Off, no receipt is sent, not even for messages read
    /// before (those owed one are forgotten).
    public func setSendsReadReceipts(_ on: Bool) async throws {
        try await store.setSetting(Self.receiptsSetting, to: [on ? 1 : 0])
        if !on { try await store.clearReceiptsDue(try store.receiptsDue().values.flatMap { $0 }) }
    }

    /// Seals `content` to `recipient` and sends it as a channel message is sent: held in memory and shown to
    /// listeners at once as a pending write, queued for the store (the envelope as a pending write of the space,
    /// the message among the user's own) with a commit that may wait, and offered to peers at once (or after the
    /// hold-back) without waiting for the disk. Returns once it is durable; should the store fail, it leaves the
    /// listeners again and the call throws.
    func sendDirect(_ content: MessageContent, to recipient: PublicKey) async throws -> DirectMessageSnapshot {
        guard recipient != publicKey else { throw DongneError.directToSelf }
        let inner = try await sign(.direct(DirectMessage(recipient: recipient, content: content)))
        return try await deliverDirect(inner, in: try await seal(inner, to: recipient), to: recipient)
    }

    /// Sends a signed `direct` sealed in `envelope` as ``sendDirect(_:to:)`` does; `plainPhoto` names the photo
    /// inside a photo message's sealed one.
    func deliverDirect(_ inner: Document, in envelope: Document, to recipient: PublicKey, plainPhoto: BlobHash? = nil)
        async throws -> DirectMessageSnapshot
    {
        source.arrivingDirect.addSent(inner)
        store.withholdFromReconciliation(envelope.id)
        let committed = Promise<Bool>()
        let durable = Promise<Result<[InsertOutcome], StoreError>>()
        // Queued before it is offered, so that no acknowledgement can overtake its pending state.
        store.submitOwnDirect(
            inner, envelope: envelope, to: recipient, plainPhoto: plainPhoto, deferrable: true, whenVisible: { [source] in
            source.arrivingDirect.removeSent(inner.id)
            committed.fulfill(true)
        }) {
            committed.fulfill(false)  // no-op when it was committed
            durable.fulfill($0)
        }
        offer([envelope])
        await hub.showArrivingDirectNow()
        if !(await committed.value) { source.arrivingDirect.removeSent(inner.id) }
        await hub.refreshDirect()
        _ = try await durable.value.get()
        // Pending unless a peer stored the envelope already: its acknowledgement may come before this commit.
        let row = DirectMessageRow(
            document: inner, correspondent: recipient, isOutgoing: true, isPending: store.isPendingWrite(envelope.id),
            read: nil)
        return source.directSnapshot(row, isFromCache: await hub.isFromCache(DirectSpace.id))!
    }

    /// Marks received messages read (see ``Conversation/markRead(_:)``).
    ///
    /// A message shown as it arrived, before the inbox kept it, is read from then on and kept as read (its
    /// receipt goes once it is kept).
    func markRead(_ ids: [DocumentID]) async throws {
        let receipts = sendsReadReceipts
        let now = configuration.clock.now()
        // In memory first: a pass that keeps a held message meanwhile then keeps it as read.
        let early = source.arrivingDirect.markRead(ids, at: now)
        let marked = try await store.markRead(ids, at: now, sendingReceipts: receipts)
        guard !marked.isEmpty || !early.isEmpty else { return }
        await hub.refreshDirect()
        if receipts, !marked.isEmpty { sendReceiptsAfterHoldBack() }
    }

    /// `inner` in an envelope for `recipient`, signed by a one-time key (stamped as much stronger as `photo`, the
    /// sealed photo the envelope names, asks).
    func seal(_ inner: Document, to recipient: PublicKey, photo: SealedPhotoReference? = nil) async throws
        -> Document
    {
        let extraBits = DirectSpace.photoStampBits(photoSize: photo?.size)
        guard let prepared = await envelopeKeys.seal(for: recipient, extraBits: extraBits) else {
            throw isStopping ? DongneError.stopped : DongneError.invalidDocument(.recipientKeyNotAPoint)
        }
        do {
            return try SealedEnvelope.seal(inner, with: prepared, at: configuration.envelopeClock.now(), photo: photo)
        } catch { throw DongneError.invalidDocument(error) }
    }

    /// Offers envelopes of the user's, queued for the store, to one random peer (a stem: it spreads them, so that
    /// only it sees them come from this node), after a random hold-back (PROTOCOL.md §1.8.1): without one, from
    /// this thread when the loop is free, as a channel message is sent. They are left out of reconciliation until
    /// ``stemSpreading`` after that, and a node that stops first offers them by reconciliation when it is back.
    private func offer(_ envelopes: [Document], holdingBack: Bool = true) {
        guard let network = network.get() else {
            for envelope in envelopes { store.releaseToReconciliation(envelope.id) }
            return
        }
        let (store, loop) = (store, loop)
        let photos = envelopes.compactMap { envelope -> BlobHash? in
            guard case .sealed(let sealed) = envelope.body else { return nil }
            return sealed.photo?.hash
        }
        let stem: @Sendable () -> Void = {
            network.assumeIsolated { network in for envelope in envelopes { network.stem(envelope) } }
            // Every relay asks its peers for the photo as it stores the envelope, and again every 2 s while it
            // lacks it; so does the writer, a few times, or never asking would single it out.
            for photo in photos {
                let first = Int64.random(in: 100...1_000)
                for delay in [first, first + 2_000, first + 4_000] {
                    _ = loop.schedule(at: .now + .milliseconds(delay)) {
                        network.assumeIsolated { $0.askForOwnPhoto(photo) }
                    }
                }
            }
            _ = loop.schedule(at: .now + Self.stemSpreading) {
                for envelope in envelopes { store.releaseToReconciliation(envelope.id) }
            }
        }
        let delay = holdingBack ? randomHoldBack() : .zero
        guard delay > .zero else {
            if loop.runIfFree(stem) == nil { loop.execute(stem) }
            return
        }
        _ = loop.schedule(at: .now + delay, stem)
    }

    /// How long an envelope of the user's stays out of reconciliation after its stem: long enough for the first
    /// relay to have spread it, so that reconciliation does not show it came from here.
    static let stemSpreading: Duration = .seconds(10)

    private func randomHoldBack() -> Duration {
        let range = configuration.directHoldBack
        let upper = max(range.lowerBound, range.upperBound).milliseconds
        return .milliseconds(Int64.random(in: range.lowerBound.milliseconds...upper))
    }

    /// Sends the receipts owed, after the hold-back: one per correspondent and 64 ids, naming the messages shown.
    private func sendReceiptsAfterHoldBack() {
        _ = loop.schedule(at: .now + randomHoldBack()) { [weak self] in
            guard let self else { return }
            Task { try? await self.sendReceiptsDue() }
        }
    }

    /// Seals and stores a receipt for every message owed one, and offers them to peers at once (the hold-back
    /// has passed). One run at a time: a run asked for meanwhile finds nothing owed, or what came since.
    func sendReceiptsDue() async throws {
        let start = receiptsInFlight.withLock { state -> Bool in
            if state.running { state.again = true }
            defer { state.running = true }
            return !state.running
        }
        guard start else { return }
        do {
            repeat { try await sendReceiptsOwedNow() } while receiptsInFlight.withLock { state -> Bool in
                state.running = state.again
                state.again = false
                return state.running
            }
        } catch {
            receiptsInFlight.withLock { $0 = (false, false) }
            throw error
        }
    }

    private func sendReceiptsOwedNow() async throws {
        guard sendsReadReceipts else { return }
        for (correspondent, ids) in try store.receiptsDue() {
            for start in stride(from: 0, to: ids.count, by: DirectSpace.maximumReceiptIDs) {
                let read = Array(ids[start..<min(ids.count, start + DirectSpace.maximumReceiptIDs)])
                let receipt = try await sign(.receipt(Receipt(recipient: correspondent, read: read)))
                let envelope = try await seal(receipt, to: correspondent)
                store.withholdFromReconciliation(envelope.id)
                try await store.insertReceipt(envelope, for: read)
                offer([envelope], holdingBack: false)
            }
        }
    }

    /// Opens, before their checks, the envelopes among `documents` that admission will take (a stamp as strong
    /// as asked, within the space's retention and cap, not stored yet) and holds the messages for the user among
    /// them, each with its authenticator checked, to show at once. The envelopes held: their checks and the
    /// messages' signatures follow at once, and a message whose envelope or signature fails leaves again
    /// (``withdrawUnchecked(_:)``).
    func openBeforeCheck(_ documents: [UnverifiedDocument]) -> [DocumentID] {
        let latest = latestAcceptedCreated
        let candidates = documents.filter {
            $0.channel == DirectSpace.id && !store.mayHold($0.id) && $0.created <= latest
                && store.mayAdmitByStampAndQuota($0) && store.mayTakeEnvelope($0)
        }
        return candidates.isEmpty ? [] : inbox.openBeforeCheck(candidates)
    }

    /// Lets go of the messages held before their envelopes' checks that are still unchecked after them: their
    /// envelopes were not taken after all (not valid, or declined), or their own signatures failed. Refreshes
    /// listeners: from the node's loop, where the hub runs.
    func withdrawUnchecked(_ envelopes: [DocumentID]) {
        let failed = source.arrivingDirect.unchecked(among: envelopes)
        guard source.arrivingDirect.remove(carriedBy: failed) else { return }
        hub.assumeIsolated { $0.refreshDirect() }
    }

    /// Envelopes were stored: the user's own among them are found and shown.
    func envelopesStored() {
        let loop = loop
        inbox.envelopesStored(schedule: { delay, work in _ = loop.schedule(at: .now + delay, work) }) { [weak self] in
            guard let self else { return }
            await hub.refreshDirect()
            await openDirectPhotos()
            // Messages read as they arrived owe their receipts once kept.
            if sendsReadReceipts, (try? store.receiptsDue().isEmpty) == false { sendReceiptsAfterHoldBack() }
        }
    }

    /// Deletes the envelopes past their retention, now and at the start of every hour while the node runs: an
    /// envelope is dated by its hour, so every node forgets it at the same moment (PROTOCOL.md §1.8). The sealed
    /// photos no envelope names any more go with them, and those still named but not here whole are asked for
    /// again.
    func expireEnvelopes() async {
        let now = configuration.envelopeClock.now()
        if let expired = try? await store.expireEnvelopesAndPhotos(at: now, keeping: { [photos] in photos.direct.beingSent }) {
            let network = network.get()
            for photo in expired.photos {
                photos.evicted(photo)
                await network?.cancelFetch(photo)  // no chunk of it is kept any more
            }
        }
        if network.get() != nil { resumeSpacePhotos() }  // at start, once the network has begun
        let untilNextHour = DirectSpace.hour - now % DirectSpace.hour
        _ = loop.schedule(at: .now + .milliseconds(Int64(untilNextHour))) { [weak self] in
            guard let self, !self.isStopping else { return }
            Task { await self.expireEnvelopes() }
        }
    }

    private static let receiptsSetting = "direct.sendsReadReceipts"
}

extension Duration {
    /// The whole milliseconds of the duration.
    fileprivate var milliseconds: Int64 { components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000 }
}
