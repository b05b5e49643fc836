import DongneCore
import DongneStore
import DongneSystem

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
        (try? store.setting(Self.receiptsSetting)).flatMap(\.first).map { $0 == 1 } ?? configuration.sendsReadReceipts
    }

    /// Turns read receipts on or off, and remembers it. Off, no receipt is sent, not even for messages read
    /// before (those owed one are forgotten).
    public func setSendsReadReceipts(_ on: Bool) async throws {
        try await store.setSetting(Self.receiptsSetting, to: [on ? 1 : 0])
        if !on { try await store.clearReceiptsDue(try store.receiptsDue().values.flatMap { $0 }) }
    }

    /// Seals `content` to `recipient`, stores it (the envelope as a pending write of the space, the message among
    /// the user's own), shows it to listeners, and offers the envelope to peers after the hold-back.
    func sendDirect(_ content: MessageContent, to recipient: PublicKey) async throws -> DirectMessageSnapshot {
        guard recipient != publicKey else { throw DongneError.directToSelf }
        let inner = try await sign(.direct(DirectMessage(recipient: recipient, content: content)))
        let envelope = try await seal(inner, to: recipient)
        try await store.insertOwnDirect(inner, envelope: envelope, to: recipient)
        await hub.refreshDirect()
        offerAfterHoldBack([envelope])
        let row = DirectMessageRow(document: inner, correspondent: recipient, isOutgoing: true, isPending: true, read: nil)
        return DirectMessageSnapshot(row, isFromCache: await hub.isFromCache(DirectSpace.id))!
    }

    /// Marks received messages read (see ``Conversation/markRead(_:)``).
    func markRead(_ ids: [DocumentID]) async throws {
        let receipts = sendsReadReceipts
        let marked = try await store.markRead(ids, at: configuration.clock.now(), sendingReceipts: receipts)
        guard !marked.isEmpty else { return }
        await hub.refreshDirect()
        if receipts { sendReceiptsAfterHoldBack() }
    }

    /// `inner` in an envelope for `recipient`, signed by a one-time key.
    private func seal(_ inner: Document, to recipient: PublicKey) async throws -> Document {
        let wrapper = await envelopeKeys.take()
        do { return try SealedEnvelope.seal(inner, to: recipient, wrapper: wrapper, at: configuration.envelopeClock.now()) } catch {
            throw DongneError.invalidDocument(error)
        }
    }

    /// Offers envelopes already stored to peers once a random hold-back has passed (PROTOCOL.md §1.8.1); a node
    /// that stops first offers them by reconciliation when it is back.
    private func offerAfterHoldBack(_ envelopes: [Document]) {
        let range = configuration.directHoldBack
        let delay = Duration.milliseconds(
            Int64.random(in: range.lowerBound.milliseconds...max(range.lowerBound, range.upperBound).milliseconds))
        _ = loop.schedule(at: .now + delay) { [weak self] in
            guard let network = self?.network.get() else { return }
            network.assumeIsolated { network in for envelope in envelopes { network.published(envelope) } }
        }
    }

    /// Sends the receipts owed, after the hold-back: one per correspondent and 64 ids, naming the messages shown.
    private func sendReceiptsAfterHoldBack() {
        let range = configuration.directHoldBack
        let delay = Duration.milliseconds(
            Int64.random(in: range.lowerBound.milliseconds...max(range.lowerBound, range.upperBound).milliseconds))
        _ = loop.schedule(at: .now + delay) { [weak self] in
            guard let self else { return }
            Task { try? await self.sendReceiptsDue() }
        }
    }

    /// Seals and stores a receipt for every message owed one, and offers them to peers at once (the hold-back
    /// has passed). Each sent receipt's messages are owed nothing more.
    func sendReceiptsDue() async throws {
        guard sendsReadReceipts else { return }
        for (correspondent, ids) in try store.receiptsDue() {
            for start in stride(from: 0, to: ids.count, by: DirectSpace.maximumReceiptIDs) {
                let read = Array(ids[start..<min(ids.count, start + DirectSpace.maximumReceiptIDs)])
                let receipt = try await sign(.receipt(Receipt(recipient: correspondent, read: read)))
                let envelope = try await seal(receipt, to: correspondent)
                _ = try await store.insertLocal([envelope])
                if let network = network.get() { await network.published(envelope) }
                try await store.clearReceiptsDue(read)
            }
        }
    }

    /// Envelopes were stored: the user's own among them are found and shown.
    func envelopesStored() {
        inbox.envelopesStored { [weak self] in await self?.hub.refreshDirect() }
    }

    /// Deletes the envelopes past their retention, now and every hour while the node runs.
    func expireEnvelopes() async {
        _ = try? await store.expireEnvelopes(at: configuration.envelopeClock.now())
        _ = loop.schedule(at: .now + .milliseconds(Int64(DirectSpace.hour))) { [weak self] in
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
