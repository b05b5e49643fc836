public import DongneCore
import DongneSystem

/// Why received bytes were not stored.
public enum IngestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes break a document rule (including a bad signature); nothing was stored.
    case invalid(DocumentError)
    /// The store failed; nothing was stored.
    case store(StoreError)
    /// The document is dated after the latest time the caller accepts (``DocumentLimits/maximumClockSkew``
    /// ahead of its clock): not stored now, and acceptable once that time comes.
    case early(created: UInt64, latest: UInt64)
    /// The document is of a kind this version does not know, and the budget for those is spent
    /// (`UnknownKindBudget`): not stored now, acceptable later.
    case unknownKindBudgetSpent
    /// The author's stamp is weaker than the store's ``AdmissionPolicy`` asks (PROTOCOL.md §1.13): not stored.
    case weakStamp(strength: Int, required: Int)
    /// The author has as many bytes stored in the document's channel as its stamp allows
    /// (``AdmissionPolicy/quota(forStrength:)``): not stored.
    case authorQuotaReached(quota: Int)
    /// An envelope of the direct-message space older than ``DirectSpace/retention``: not stored (PROTOCOL.md §1.8).
    case expired(created: UInt64)
    /// The direct-message space holds ``DirectSpace/maximumStoredBytes`` already: not stored until envelopes expire.
    case directSpaceFull
    /// A `direct` or `receipt` outside its envelope, which no honest node sends: not stored.
    case unsealed

    /// One line for people.
    public var description: String {
        switch self {
        case .invalid(let error): "invalid document: \(error)"
        case .store(let error): "\(error)"
        case .early(let created, let latest): "dated \(created &- latest) ms past the latest time accepted"
        case .unknownKindBudgetSpent: "of an unknown kind, beyond the budget for those"
        case .weakStamp(let strength, let required): "its author's stamp has strength \(strength), \(required) asked"
        case .authorQuotaReached(let quota): "its author has \(quota) bytes stored in the channel, all its stamp allows"
        case .expired(let created): "an envelope of \(created), past the direct-message space's retention"
        case .directSpaceFull: "the direct-message space is full"
        case .unsealed: "a direct message or receipt outside its envelope"
        }
    }
}

/// A received batch after its checks: the documents to store, and the result already known for the others.
public struct AdmittedBatch: Sendable {
    fileprivate var results: [Result<(Document, InsertOutcome), IngestError>?]
    fileprivate var fresh: [(index: Int, document: Document)]
    /// Second copies of fresh documents: they end as their first copy's write does.
    fileprivate var copies: [(index: Int, id: DocumentID)] = []

    /// How many documents of the batch passed every check and are not stored yet.
    public var newDocumentCount: Int { fresh.count }
    /// The ids of those documents.
    public var newDocumentIDs: [DocumentID] { fresh.map(\.document.id) }
    /// Those documents.
    public var newDocuments: [Document] { fresh.map(\.document) }
    /// The channels of those documents.
    public var newDocumentChannels: Set<ChannelID> { Set(fresh.compactMap(\.document.channel)) }
    /// How many documents of the batch break a rule (a bad signature, say).
    public var invalidDocumentCount: Int { invalidIndices.count }
    /// The positions in the batch of the documents that break a rule.
    public var invalidIndices: [Int] {
        results.indices.filter { if case .failure(.invalid)? = results[$0] { true } else { false } }
    }
}

extension Store {
    /// Takes bytes received from anywhere and stores them if they are a valid, new document.
    ///
    /// Returns the document and whether it was new. See ``admit(_:)`` for the order of checks.
    public func ingest(_ bytes: [UInt8]) async throws(IngestError) -> (Document, InsertOutcome) {
        try await ingest([bytes])[0].get()
    }

    /// Checks a batch of received documents and stores the valid, new ones in one durable write: ``admit(_:)``
    /// then ``commit(_:)``. One result per input, in order; an invalid document does not stop the others.
    public func ingest(_ batch: [[UInt8]]) async -> [Result<(Document, InsertOutcome), IngestError>] {
        await commit(admit(batch))
    }

    /// Checks a batch of received documents in the calling task, without writing anything.
    ///
    /// The checks run cheapest first: size, canonical form and fields (parsing), then the duplicate check by id
    /// (against the store and within the batch), and only then the Ed25519 signature, which costs about fifty
    /// times more than the rest. A stored duplicate is answered from the store without checking its signature
    /// again: the stored copy was checked on arrival. The signatures of a large batch are checked on every core
    /// at once (the calling thread and Swift's pool), with the same results as checking one document after the
    /// other; a small batch (a live message or two) is checked in the calling thread alone.
    /// Documents dated after `latestCreated` fail as ``IngestError/early(created:latest:)``.
    public func admit(_ batch: [[UInt8]], latestCreated: UInt64 = .max) -> AdmittedBatch {
        admit(
            batch.map { bytes in Result { () throws(DocumentError) in try UnverifiedDocument(parsing: bytes) } },
            latestCreated: latestCreated)
    }

    /// ``admit(_:)`` for documents already parsed (gossip parses each once, to learn its id and channel); those
    /// dated after `latestCreated` fail as ``IngestError/early(created:latest:)`` before any other check.
    public func admit(parsed batch: [UnverifiedDocument], latestCreated: UInt64 = .max) -> AdmittedBatch {
        admit(batch.map { .success($0) }, latestCreated: latestCreated)
    }

    private func admit(
        _ batch: [Result<UnverifiedDocument, DocumentError>], latestCreated: UInt64 = .max
    ) -> AdmittedBatch {
        var admitted = AdmittedBatch(results: Array(repeating: nil, count: batch.count), fresh: [])
        var parsed: [(index: Int, document: UnverifiedDocument)] = []
        for (index, outcome) in batch.enumerated() {
            switch outcome {
            case .success(let document) where document.created > latestCreated:
                admitted.results[index] = .failure(.early(created: document.created, latest: latestCreated))
            case .success(let document): parsed.append((index, document))
            case .failure(let error): admitted.results[index] = .failure(.invalid(error))
            }
        }
        let stored: Set<DocumentID>
        // Nearly every received document is new: the filter says so without a read.
        let maybeStored = parsed.map(\.document.id).filter(known.storedIDs.mightContain)
        do { stored = maybeStored.isEmpty ? [] : try storedIDs(among: maybeStored) } catch {
            for entry in parsed { admitted.results[entry.index] = .failure(.store(error)) }
            return admitted
        }
        // Each id of the batch is decided once; a second copy gets the first one's result (a declined document's
        // copy is declined too, not a duplicate of something stored).
        var firsts: [(index: Int, document: UnverifiedDocument)] = []
        var secondCopies: [(index: Int, id: DocumentID)] = []
        var seen: Set<DocumentID> = []
        for entry in parsed {
            if seen.insert(entry.document.id).inserted {
                firsts.append(entry)
            } else {
                secondCopies.append((entry.index, entry.document.id))
            }
        }
        admitFirstCopies(firsts, stored: stored, into: &admitted)
        let decided = Dictionary(firsts.map { ($0.document.id, admitted.results[$0.index]) }) { first, _ in first }
        for (index, id) in secondCopies {
            let first = decided[id]!
            admitted.results[index] = Self.secondCopy(of: id, decided: first, fresh: admitted.fresh)
            if first == nil { admitted.copies.append((index, id)) }
        }
        return admitted
    }

    /// Decides each document's result (nil for a new, valid one, then in `fresh`): the cheap checks one by one,
    /// then every signature left to check at once on every core, then, in the batch's order, what may only
    /// follow a signature. The results are those of checking the documents one by one.
    private func admitFirstCopies(
        _ firsts: [(index: Int, document: UnverifiedDocument)], stored: Set<DocumentID>,
        into admitted: inout AdmittedBatch
    ) {
        var waiting: [(index: Int, document: UnverifiedDocument, quota: Int, inParallel: Bool)] = []
        var pendingBytes: [AuthorUsage.Key: Int] = [:]
        for (index, unverified) in firsts {
            switch check(unverified, stored: stored, pendingBytes: pendingBytes) {
            case .decided(let result): admitted.results[index] = result
            case .signatureToCheck(let quota):
                waiting.append((index, unverified, quota, true))
                pendingBytes[AuthorUsage.Key(unverified), default: 0] += unverified.bytes.count
            case .afterTheBatchsEarlierDocuments(let quota): waiting.append((index, unverified, quota, false))
            }
        }
        var signatures = waiting.filter(\.inParallel).map(\.document)
            .mapOnEveryCore(minimumShare: Self.signaturesPerShare) { document in
                Result { () throws(DocumentError) in try document.verified() }
            }[...]
        for (index, document, quota, inParallel) in waiting {
            let signature = inParallel ? signatures.removeFirst() : nil
            // The batch's earlier documents may have filled the quota (or loaded a usage unknown before): declined
            // as one by one would have, before the signature's result or a budget counts.
            let result =
                isAtQuota(document, quota: quota)
                ? .failure(.authorQuotaReached(quota: quota))
                : signature.map { $0.mapError(IngestError.invalid).flatMap { afterSignature($0, quota: quota) } }
                    ?? afterEarlierDocuments(document, quota: quota)
            switch result {
            case .success(let document): admitted.fresh.append((index, document))
            case .failure(let error): admitted.results[index] = .failure(error)
            }
        }
    }

    /// A document that would pass its author's quota if the batch's earlier documents by the same author hold:
    /// now that they are decided, declined if they left no room, else checked here.
    private func afterEarlierDocuments(_ document: UnverifiedDocument, quota: Int) -> Result<Document, IngestError> {
        do { return afterSignature(try document.verified(), quota: quota) } catch { return .failure(.invalid(error)) }
    }

    /// Whether `document`'s author is known to have no room left for it in its channel.
    private func isAtQuota(_ document: UnverifiedDocument, quota: Int) -> Bool {
        guard let used = authorUsage.known(AuthorUsage.Key(document)) else { return false }
        return used > quota - min(quota, document.bytes.count)
    }

    /// The fewest signatures worth handing to another core: waking a thread costs about as much as a few checks,
    /// and a live message or two is checked right where it arrived.
    package static let signaturesPerShare = 16

    /// The result of a batch's second copy of a document, given the first's (nil when it was new).
    private static func secondCopy(
        of id: DocumentID, decided first: Result<(Document, InsertOutcome), IngestError>?,
        fresh: [(index: Int, document: Document)]
    ) -> Result<(Document, InsertOutcome), IngestError>? {
        switch first {
        case .none: fresh.first { $0.document.id == id }.map { .success(($0.document, .duplicate)) }
        case .success(let (document, _))?: .success((document, .duplicate))
        case .failure(let error)?: .failure(error)
        }
    }

    /// What the checks before a signature decided about one document.
    private enum CheckBeforeSignature {
        /// Its result, with no signature checked: a stored duplicate, or declined.
        case decided(Result<(Document, InsertOutcome), IngestError>)
        /// Its signature is next; its author's quota in its channel is `quota` bytes.
        case signatureToCheck(quota: Int)
        /// Its author's earlier documents in the batch, if they hold, leave no room for it: decided after them.
        /// (Declining it now would let forgeries in an author's name crowd out its genuine documents.)
        case afterTheBatchsEarlierDocuments(quota: Int)
    }

    /// Every check that comes before `unverified`'s signature, cheapest first. `pendingBytes` are the bytes of the
    /// batch's earlier documents whose signatures are still to be checked, by author and channel: a document they
    /// would push past the quota waits for them, so that a paid identity's flood past its quota costs no
    /// signature check on other cores (each is checked here, in turn, should its earlier documents fail theirs).
    private func check(
        _ unverified: UnverifiedDocument, stored: Set<DocumentID>, pendingBytes: [AuthorUsage.Key: Int]
    ) -> CheckBeforeSignature {
        if stored.contains(unverified.id) {
            do {
                if let copy = try document(unverified.id) { return .decided(.success((copy, .duplicate))) }
            } catch { return .decided(.failure(.store(error))) }
        }
        if let refusal = directSpaceRefusal(of: unverified) { return .decided(.failure(refusal)) }
        let admission = admission(in: unverified.channel)
        // One hash, before the signature's fifty-fold cost: a flood of fresh keys costs this and no more.
        let strength = unverified.stampStrength
        let required = requiredStrength(of: unverified, admission)
        guard strength >= required else {
            return .decided(.failure(.weakStamp(strength: strength, required: required)))
        }
        // An author already at its quota is declined before its signature too: the check only reads (a forgery
        // spends nothing), and a paid identity's flood past its quota then costs no verification.
        let size = unverified.bytes.count
        // A one-time key signs one envelope: its quota is that envelope, whatever its stamp, so that every
        // envelope costs its own stamp (PROTOCOL.md §1.8).
        let quota = unverified.channel == DirectSpace.id ? size : admission.quota(forStrength: strength)
        let key = AuthorUsage.Key(unverified)
        let used = authorUsage.known(key) ?? 0
        if used > quota - min(quota, size) || isSpentEnvelopeKey(unverified) {
            return .decided(.failure(.authorQuotaReached(quota: quota)))
        }
        let pending = pendingBytes[key, default: 0]
        return used + pending > quota - min(quota, size)
            ? .afterTheBatchsEarlierDocuments(quota: quota) : .signatureToCheck(quota: quota)
    }

    /// The checks that may only follow a valid signature, which spend budgets a forgery must not: a new
    /// document passes them all, and is counted against its author's quota.
    private func afterSignature(_ document: Document, quota: Int) -> Result<Document, IngestError> {
        if case .unknown = document.body, !unknownKinds.take(document.bytes.count) {
            return .failure(.unknownKindBudgetSpent)
        }
        do {
            guard try takeQuota(for: document, quota: quota) else { return .failure(.authorQuotaReached(quota: quota)) }
        } catch { return .failure(.store(error)) }
        return .success(document)
    }

    /// Whether `document`'s author may still have it stored, as far as the store knows without reading (its stamp
    /// as strong as asked, its author not known to be at its quota): for showing a document before its checks,
    /// which must never show what they will decline.
    public func mayAdmitByStampAndQuota(_ document: UnverifiedDocument) -> Bool {
        let admission = admission(in: document.channel)
        guard document.stampStrength >= requiredStrength(of: document, admission) else { return false }
        let quota = admission.quota(forStrength: document.stampStrength)
        let used = authorUsage.known(AuthorUsage.Key(document)) ?? 0
        return document.bytes.count <= quota && used <= quota - document.bytes.count && !isSpentEnvelopeKey(document)
    }

    /// Whether `document` is an envelope whose one-time key is known to have signed another one already stored.
    private func isSpentEnvelopeKey(_ document: UnverifiedDocument) -> Bool {
        document.channel == DirectSpace.id && spentEnvelopeKeys.contains(document.author)
    }

    /// Whether the direct-message space would take `envelope` now as far as its retention and cap go (no
    /// reading): for opening it before its checks, which must not show what admission will decline.
    public func mayTakeEnvelope(_ envelope: UnverifiedDocument) -> Bool { directSpaceRefusal(of: envelope) == nil }

    /// The rules of `channel`: the direct-message space's for envelopes (a one-time key pays for one), the
    /// network's for everything else.
    func admission(in channel: ChannelID?) -> AdmissionPolicy {
        channel == DirectSpace.id ? directAdmission : admission
    }

    /// The stamp strength `document` must show: its channel's, and for an envelope that names a photo more with
    /// the photo's size (PROTOCOL.md §1.8, *Photos*).
    private func requiredStrength(of document: UnverifiedDocument, _ admission: AdmissionPolicy) -> Int {
        guard case .sealed(let sealed) = document.body, let photo = sealed.photo else {
            return admission.requiredStampStrength
        }
        return admission.requiredStampStrength + DirectSpace.photoStampBits(photoSize: photo.size)
    }

    /// Why the direct-message space does not take `document` now, before any other check: a `direct` or
    /// `receipt` outside its envelope, an envelope past its retention, or a space at its cap.
    private func directSpaceRefusal(of document: UnverifiedDocument) -> IngestError? {
        switch document.body {
        case .direct, .receipt: return .unsealed
        case .sealed(let sealed):
            if DirectSpace.hasExpired(created: document.created, at: envelopeClock()) {
                return .expired(created: document.created)
            }
            let bytes = DirectSpace.storedBytes(envelopeBytes: document.bytes.count, photo: sealed.photo)
            return directSpaceUsage.fits(bytes) ? nil : .directSpaceFull
        case .channel, .message, .report, .retract, .profile, .unknown: return nil
        }
    }

    /// Counts `document` against its author's quota in its channel; false if it does not fit.
    private func takeQuota(for document: Document, quota: Int) throws(StoreError) -> Bool {
        let key = AuthorUsage.Key(document)
        return try authorUsage.take(document.bytes.count, for: key, quota: quota) { key throws(StoreError) in
            try storedBytes(by: key.author, in: key.channel)
        }
    }

    /// Stores the new documents of an admitted batch in one durable write; the results of the whole batch.
    /// `deferrable` and `whenVisible` as for ``insert(_:deferrable:whenVisible:)``.
    public func commit(
        _ admitted: AdmittedBatch, deferrable: Bool = false, whenVisible: (@Sendable () -> Void)? = nil
    ) async -> [Result<(Document, InsertOutcome), IngestError>] {
        await withCheckedContinuation { continuation in
            submit(admitted, deferrable: deferrable, whenVisible: whenVisible) { continuation.resume(returning: $0) }
        }
    }

    /// Queues ``commit(_:deferrable:whenVisible:)`` and returns at once; `completion` hears the results of the
    /// whole batch once it is durable (on the store's thread, so it should only hand them on).
    public func submit(
        _ admitted: AdmittedBatch, deferrable: Bool = false, whenVisible: (@Sendable () -> Void)? = nil,
        completion: @escaping @Sendable ([Result<(Document, InsertOutcome), IngestError>]) -> Void
    ) {
        let (fresh, copies) = (admitted.fresh, admitted.copies)
        let earlier = admitted.results
        submitInsert(fresh.map(\.document), deferrable: deferrable, whenVisible: whenVisible) {
            [authorUsage, directSpaceUsage, spentEnvelopeKeys] outcome in
            var results = earlier
            switch outcome {
            case .success(let outcomes):
                for (entry, inserted) in zip(fresh, outcomes) {
                    results[entry.index] = .success((entry.document, inserted))
                    // Stored meanwhile by another way, which counted it too.
                    if inserted == .duplicate {
                        authorUsage.add(-entry.document.bytes.count, for: AuthorUsage.Key(entry.document))
                    }
                    if entry.document.channel == DirectSpace.id {
                        // A one-time key is seen once: the store and the bounded set of spent keys answer for it
                        // from now on, not the table of every author's bytes.
                        spentEnvelopeKeys.insert(entry.document.author)
                        authorUsage.forget(AuthorUsage.Key(entry.document))
                        if inserted == .stored { directSpaceUsage.add(Self.spaceBytes(of: entry.document)) }
                    }
                }
            case .failure(let error):
                for entry in fresh { results[entry.index] = .failure(.store(error)) }
                // The write may have failed after its commit (its sync): the store says what it kept.
                for entry in fresh { authorUsage.forget(AuthorUsage.Key(entry.document)) }
            }
            for copy in copies {
                let first = fresh.first { $0.document.id == copy.id }
                guard case .failure(let error)? = first.flatMap({ results[$0.index] }) else { continue }
                results[copy.index] = .failure(error)
            }
            completion(results.map { $0! })
        }
    }

    /// The bytes an envelope takes of the space's cap: its own and its photo's (``DirectSpace/storedBytes``).
    static func spaceBytes(of envelope: Document) -> Int {
        guard case .sealed(let sealed) = envelope.body else { return envelope.bytes.count }
        return DirectSpace.storedBytes(envelopeBytes: envelope.bytes.count, photo: sealed.photo)
    }
}
