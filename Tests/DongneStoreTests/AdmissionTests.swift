import DongneCore
import DongneStore
import Testing

/// Admission (PROTOCOL.md §1.13): a store takes a document only from an author whose stamp is as strong as asked,
/// and only as many bytes per channel as the stamp allows. Found by an attack in which fresh keys cost nothing:
/// 5,000 keys of small messages, and a fresh key per session, each stored and relayed everything.
@Suite struct AdmissionTests {
    let policy = AdmissionPolicy(requiredStampStrength: 10, authorQuotaBytes: 4_096)

    func stamped(_ seed: UInt8, strength: Int = 10) -> SigningKey {
        let key = SigningKey(seed: [UInt8](repeating: seed, count: 31) + [0xad])!
        return key.stamped(IdentityStamp.mine(for: key.publicKey, strength: strength))
    }

    @Test func freshKeysWithoutStampsStoreNothingAndTheirStampIsCheckedBeforeTheSignature() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        let flood = try (0..<200).map { n in
            try message("광고 \(n)", by: SigningKey(seed: [UInt8](repeating: UInt8(n), count: 31) + [0x5b])!)
        }
        let results = await store.ingest(flood.map(\.bytes))
        #expect(results.allSatisfy { if case .failure(.weakStamp(0, 10)) = $0 { true } else { false } })
        #expect(try store.documentCount() == 0)
        // A forged signature with a weak stamp is declined for its stamp: the signature was never checked.
        var forged = try message("위조", by: Keys.bob).bytes
        forged[forged.count - 1] ^= 1
        #expect(await store.ingest([forged])[0].failureDescription == "its author's stamp has strength 0, 10 asked")
    }

    /// An envelope that names a sealed photo pays for its bytes: a stamp ⌈log2 ⌈size / 8,192⌉⌉ bits stronger than
    /// the envelope strength, checked before the signature; its bytes count in the space's cap.
    @Test func anEnvelopeNamingAPhotoNeedsAStampThatGrowsWithThePhoto() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let clock: UInt64 = 1_764_400_000_000
        let store = try Store(path: directory.file("dongne.sqlite"), admission: policy, envelopeClock: { clock })
        let base = DirectSpace.envelopeStampStrength(required: policy.requiredStampStrength)
        let photo = SealedPhotoReference(hash: BlobHash(Bytes32([UInt8](repeating: 3, count: 32))!), size: 1 << 20)
        func envelope(strength: Int, seed: UInt8) throws -> Document {
            let inner = try Document.sign(
                .direct(DirectMessage(recipient: Keys.bob.publicKey, content: .photo(photo.hash), photoKey: Array(repeating: 1, count: 32))),
                created: clock, by: Keys.alice)
            let wrapper = SigningKey(seed: [UInt8](repeating: seed, count: 31) + [0xe1])!
            return try SealedEnvelope.seal(
                inner, from: Keys.alice, to: Keys.bob.publicKey,
                wrapper: wrapper.stamped(IdentityStamp.mine(for: wrapper.publicKey, strength: strength)), at: clock,
                photo: photo)
        }
        let weak = try envelope(strength: base, seed: 1)
        let required = base + 7
        guard case .failure(.weakStamp(_, required)) = await store.ingest([weak.bytes])[0] else {
            Issue.record("an envelope naming 1 MiB took the stamp of a text envelope")
            return
        }
        let paid = try envelope(strength: required, seed: 2)
        guard case .success = await store.ingest([paid.bytes])[0] else {
            Issue.record("a paid envelope was not taken")
            return
        }
        #expect(try store.directSpaceSize() == (1, paid.bytes.count + photo.size))
    }

    @Test func anAuthorsBytesInAChannelStopAtTheQuotaAndAStrongerStampDoublesIt() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        let key = stamped(1)
        let strength = key.stampStrength
        let quota = policy.quota(forStrength: strength)
        let posts = try (0..<200).map { try message("글 \($0)", by: key, at: 1_000 + UInt64($0)).bytes }
        let results = await store.ingest(posts)
        let stored = results.prefix { if case .success = $0 { true } else { false } }.count
        let keptBytes = posts.prefix(stored).reduce(0) { $0 + $1.count }
        #expect(keptBytes <= quota && keptBytes + posts[stored].count > quota)
        #expect(results.dropFirst(stored).allSatisfy { if case .failure(.authorQuotaReached(quota)) = $0 { true } else { false } })
        #expect(try store.storedBytes(by: key.publicKey, in: Keys.seoul.id) == keptBytes)
        // Another channel has a quota of its own; another author too.
        let elsewhere = try Document.sign(
            .message(Message(channel: try ChannelName(normalizing: "경기도").id, senderName: "민지", content: .text("안녕"))),
            created: 5_000, by: key)
        #expect(try await store.ingest(elsewhere.bytes).1 == .stored)
        #expect(try await store.ingest(try message("나도", by: stamped(2)).bytes).1 == .stored)
        // One bit more doubles it: the same author, its stamp strengthened, goes on.
        let stronger = key.stamped(IdentityStamp.mine(for: key.publicKey, strength: strength + 1))
        let more = try (0..<200).map { try message("더 \($0)", by: stronger, at: 9_000 + UInt64($0)).bytes }
        let moreResults = await store.ingest(more)
        let moreStored = moreResults.prefix { if case .success = $0 { true } else { false } }.count
        let total = keptBytes + more.prefix(moreStored).reduce(0) { $0 + $1.count }
        #expect(total <= policy.quota(forStrength: stronger.stampStrength))
        #expect(total + more[moreStored].count > policy.quota(forStrength: stronger.stampStrength))
    }

    @Test func whatMayShowBeforeItsChecksIsWhatAdmissionWouldNotDecline() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        let key = stamped(5)
        #expect(store.mayAdmitByStampAndQuota(try UnverifiedDocument(parsing: try message("첫 글", by: key).bytes)))
        #expect(!store.mayAdmitByStampAndQuota(try UnverifiedDocument(parsing: try message("약함", by: Keys.bob).bytes)))
        let posts = try (0..<200).map { try message("글 \($0)", by: key, at: 1_000 + UInt64($0)).bytes }
        _ = await store.ingest(posts)
        let past = try message("넘침", by: key, at: 9_999)
        #expect(!store.mayAdmitByStampAndQuota(try UnverifiedDocument(parsing: past.bytes)), "its author is at its quota")
        #expect(await store.ingest([past.bytes])[0].failureDescription?.contains("all its stamp allows") == true)
    }

    @Test func aSecondCopyInABatchGetsTheFirstCopysResult() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        let weak = try message("약함", by: Keys.bob)
        let fine = try message("좋음", by: stamped(4))
        let results = await store.ingest([weak.bytes, fine.bytes, weak.bytes, fine.bytes])
        #expect(results[0].failureDescription == results[2].failureDescription)
        #expect(results[2].failureDescription != nil, "a declined document's copy is not a stored duplicate")
        #expect(try results[1].get().1 == .stored && results[3].get().1 == .duplicate)
    }

    /// The signatures of a large batch are checked on every core at once, after the cheap checks of the whole batch:
    /// the batch's own earlier documents still count against their author's quota before any signature is checked.
    @Test func aFloodPastTheQuotaWithinOneBatchCostsNoSignatureCheck() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        let key = stamped(6)
        let quota = policy.quota(forStrength: key.stampStrength)
        let posts = try (0..<200).map { try message("글 \($0)", by: key, at: 1_000 + UInt64($0)).bytes }
        var total = 0
        let fitting = posts.prefix { post in
            total += post.count
            return total <= quota
        }.count
        // Everything past the quota is forged: a signature checked would say so.
        let flood = posts.enumerated().map { index, post in
            var bytes = post
            if index >= fitting { bytes[bytes.count - 1] ^= 1 }
            return bytes
        }
        let results = await store.ingest(flood)
        #expect(fitting > 2 * Store.signaturesPerShare, "enough signatures to spread over the cores")
        #expect(results.prefix(fitting).allSatisfy { if case .success((_, .stored)) = $0 { true } else { false } })
        let declined = results.dropFirst(fitting)
        #expect(declined.allSatisfy { if case .failure(.authorQuotaReached(quota)) = $0 { true } else { false } })
    }

    /// Forgeries in an author's name, ahead of its genuine documents in one batch, do not crowd those out.
    @Test func forgeriesEarlierInABatchLeaveTheAuthorsGenuineDocumentsTheirRoom() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        let key = stamped(7)
        let forgeries = try (0..<100).map { n in
            var bytes = try message("위조 \(n)", by: key, at: 1_000 + UInt64(n)).bytes
            bytes[bytes.count - 1] ^= 1
            return bytes
        }
        let genuine = try message("진짜", by: key, at: 5_000)
        let results = await store.ingest(forgeries + [genuine.bytes])
        let forged = results.dropLast()
        #expect(forged.allSatisfy { if case .failure(.invalid(.badSignature)) = $0 { true } else { false } })
        #expect(try results.last!.get().1 == .stored)
    }

    /// An author near its quota when the store opens again (its usage not loaded yet): a forgery after its genuine
    /// document is declined for the quota, as one by one, not reported as a bad signature.
    @Test func afterARestartTheQuotaStillComesBeforeALaterSignaturesResult() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let key = stamped(8)
        var store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        let posts = try (0..<200).map { try message("글 \($0)", by: key, at: 1_000 + UInt64($0)).bytes }
        _ = await store.ingest(posts)
        store.close()
        store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        defer { store.close() }
        var forged = try message("위조", by: key, at: 9_001).bytes
        forged[forged.count - 1] ^= 1
        let results = await store.ingest([try message("넘침", by: key, at: 9_000).bytes, forged])
        #expect(results.allSatisfy { if case .failure(.authorQuotaReached) = $0 { true } else { false } })
    }

    /// A batch large enough for every core gets, document by document, what admitting them one at a time gives.
    @Test func aLargeBatchGetsWhatItsDocumentsGetOneByOne() async throws {
        var batch: [[UInt8]] = []
        for n in 0..<120 {
            let key = stamped(UInt8(10 + n % 7))
            var bytes = try message("글 \(n)", by: n % 11 == 0 ? Keys.bob : key, at: 1_000 + UInt64(n)).bytes
            if n % 5 == 0 { bytes[bytes.count - 1] ^= 1 }  // forged
            batch.append(bytes)
            if n % 13 == 0 { batch.append(batch[batch.count / 2]) }  // a second copy
        }
        let stored = try message("먼저", by: stamped(10), at: 999).bytes
        batch.insert(stored, at: 60)
        let whole = TemporaryDirectory(), single = TemporaryDirectory()
        defer { whole.remove(); single.remove() }
        let wholeStore = try Store(path: whole.file("dongne.sqlite"), admission: policy)
        let singleStore = try Store(path: single.file("dongne.sqlite"), admission: policy)
        _ = await wholeStore.ingest([stored])
        _ = await singleStore.ingest([stored])
        let together = await wholeStore.ingest(batch)
        var oneByOne: [Result<(Document, InsertOutcome), IngestError>] = []
        for bytes in batch { oneByOne.append(await singleStore.ingest([bytes])[0]) }
        #expect(together.map(Self.summary) == oneByOne.map(Self.summary))
        #expect(Set(together.map(Self.summary)).count >= 4, "stored, duplicate, forged and weak all occur")
        #expect(try wholeStore.documentCount() == singleStore.documentCount())
    }

    private static func summary(_ result: Result<(Document, InsertOutcome), IngestError>) -> String {
        switch result {
        case .success(let (_, outcome)): "\(outcome)"
        case .failure(let error): "\(error)"
        }
    }

    @Test func forgeriesInAnAuthorsNameDoNotSpendItsQuotaAndTheCountSurvivesARestart() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let key = stamped(3)
        var store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        let forgeries = try (0..<100).map { n in
            var bytes = try message("위조 \(n)", by: key, at: 1_000 + UInt64(n)).bytes
            bytes[bytes.count - 1] ^= 1
            return bytes
        }
        let refused = await store.ingest(forgeries)
        #expect(refused.allSatisfy { if case .failure(.invalid(.badSignature)) = $0 { true } else { false } })
        let first = try message("진짜", by: key)
        #expect(try await store.ingest(first.bytes).1 == .stored)
        store.close()
        store = try Store(path: directory.file("dongne.sqlite"), admission: policy)
        #expect(try store.authorBytes(by: key.publicKey, in: Keys.seoul.id) == first.bytes.count)
        store.close()
    }
}

extension Result {
    /// The failure's description, or nil on success.
    var failureDescription: String? {
        if case .failure(let error) = self { "\(error)" } else { nil }
    }
}
