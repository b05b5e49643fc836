@_spi(TestVectors) import DongneCore
import Testing

/// Envelopes of the direct-message space (PROTOCOL.md §1.8): what the recipient opens, and what everyone else
/// sees — which must name neither party.
struct SealedEnvelopeTests {
    static let alice = SigningKey(seed: [UInt8](repeating: 1, count: 32))!
    static let bob = SigningKey(seed: [UInt8](repeating: 2, count: 32))!
    static let carol = SigningKey(seed: [UInt8](repeating: 3, count: 32))!
    static let now: UInt64 = 1_764_401_234_567

    static func direct(_ text: String, from author: SigningKey = alice, to recipient: SigningKey = bob) throws
        -> Document
    {
        try Document.sign(
            .direct(DirectMessage(recipient: recipient.publicKey, content: .text(text))), created: now, by: author)
    }

    static func envelope(_ inner: Document, from author: SigningKey = alice, to recipient: SigningKey = bob) throws
        -> Document
    {
        try SealedEnvelope.seal(inner, from: author, to: recipient.publicKey, wrapper: .generate(), at: now)
    }

    @Test func theRecipientOpensTheSignedInnerDocumentAndNobodyElseDoes() throws {
        let inner = try Self.direct("안녕, 내일 봐요")
        let envelope = try Self.envelope(inner)
        guard case .sealed(let box) = envelope.body else { Issue.record("not an envelope"); return }
        #expect(DirectMessageKey(Self.bob).open(box) == .direct(inner, DirectMessage(recipient: Self.bob.publicKey, content: .text("안녕, 내일 봐요"))))
        #expect(DirectMessageKey(Self.alice).open(box) == .notForThisKey)
        #expect(DirectMessageKey(Self.carol).open(box) == .notForThisKey)
    }

    @Test func anEnvelopeNamesNeitherPartyAndIsDatedByTheHourInTheSpace() throws {
        let inner = try Self.direct("비밀")
        let envelope = try Document(verifying: try Self.envelope(inner).bytes)
        for key in [Self.alice.publicKey.bytes, Self.bob.publicKey.bytes, Array("비밀".utf8)] {
            #expect(!envelope.bytes.contains(subsequence: key))
        }
        #expect(envelope.author != Self.alice.publicKey && envelope.channel == DirectSpace.id)
        #expect(envelope.created == Self.now - Self.now % 3_600_000)
        guard case .sealed(let box) = envelope.body else { Issue.record("not an envelope"); return }
        #expect(box.box.count == 512 + 48)
    }

    @Test func innerDocumentsArePaddedToThreeSizesOnly() throws {
        var sizes: Set<Int> = []
        for length in [1, 300, 400, 1_500, 1_990, 3_900] {
            let inner = try Self.direct(String(repeating: "a", count: length))
            guard case .sealed(let box) = try Self.envelope(inner).body else { continue }
            sizes.insert(box.box.count)
        }
        #expect(sizes == Set(DirectSpace.boxSizes))
    }

    @Test func twoEnvelopesOfOneConversationShareNoBytesARelayCouldMatch() throws {
        let first = try Self.envelope(try Self.direct("하나"))
        let second = try Self.envelope(try Self.direct("둘"))
        #expect(first.author != second.author)
        guard case .sealed(let a) = first.body, case .sealed(let b) = second.body else { return }
        #expect(a.box.prefix(32) != b.box.prefix(32))  // the ephemeral keys
    }

    @Test func aMessageResealedToSomeoneElseIsRefusedByThem() throws {
        // Bob got Alice's message and seals it to Carol, as if Alice had written to her.
        let inner = try Self.direct("for Bob only")
        guard case .sealed(let box) = try Self.envelope(inner, to: Self.carol).body else { return }
        #expect(DirectMessageKey(Self.carol).open(box) == .invalid(.wrongType(field: "inner kind or recipient")))
    }

    @Test func aBadInnerSignatureIsRefusedAtOnceOrWhenItIsCheckedLater() throws {
        var bytes = try Self.direct("forged").bytes
        bytes[bytes.count - 1] ^= 1
        // Authenticated and sealed by hand, as Alice could: the recipient checks the signature too.
        let key = DirectMessageKey(Self.alice).conversationKey(with: Self.bob.publicKey)!
        let padded = SealedEnvelope.authenticatedAndPadded(bytes, conversationKey: key)!
        let box = SealedBox(box: try SealedEnvelope.sealPadded(padded, to: Self.bob.publicKey))
        #expect(DirectMessageKey(Self.bob).open(box) == .invalid(.badSignature))
        guard case .direct(let deferred, _) = DirectMessageKey(Self.bob).open(box, signature: .deferred) else {
            Issue.record("the authenticator holds: it opens with its signature's check deferred")
            return
        }
        #expect(!deferred.signatureHolds)
        #expect(try Self.direct("real").signatureHolds)
    }

    @Test func aMessageInSomeoneElsesNameIsRefusedByItsAuthenticatorBeforeItsSignature() throws {
        // Carol writes "from Alice" to Bob: she can sign nothing as Alice, and she can authenticate only as herself.
        var bytes = try Self.direct("from Alice, honestly").bytes
        bytes[bytes.count - 1] ^= 1
        for forger in [Self.carol, Self.bob] {
            let key = DirectMessageKey(forger).conversationKey(with: Self.bob.publicKey)!
            let padded = SealedEnvelope.authenticatedAndPadded(bytes, conversationKey: key)!
            let box = SealedBox(box: try SealedEnvelope.sealPadded(padded, to: Self.bob.publicKey))
            #expect(DirectMessageKey(Self.bob).open(box, signature: .deferred) == .invalid(.badAuthenticator))
        }
    }

    @Test func bothPartiesComputeTheSameConversationKeyAndNobodyElseDoes() throws {
        let ab = DirectMessageKey(Self.alice).conversationKey(with: Self.bob.publicKey)
        #expect(ab != nil && ab == DirectMessageKey(Self.bob).conversationKey(with: Self.alice.publicKey))
        #expect(ab != DirectMessageKey(Self.carol).conversationKey(with: Self.bob.publicKey))
        #expect(throws: DocumentError.wrongType(field: "author")) {
            try SealedEnvelope.seal(
                try Self.direct("not mine"), from: Self.carol, to: Self.bob.publicKey, wrapper: .generate(), at: Self.now)
        }
    }

    @Test func onlyDirectsAndReceiptsAreSealedAndTheLargestFits() throws {
        let profile = try Document.sign(.profile(Profile(displayName: "민지")), created: Self.now, by: Self.alice)
        #expect(throws: DocumentError.wrongType(field: "kind")) { try Self.envelope(profile) }
        let largest = try Self.direct(String(repeating: "가", count: 1_333))
        let envelope = try Self.envelope(largest)
        #expect(envelope.bytes.count <= DocumentLimits.maximumDocumentBytes)
        guard case .sealed(let box) = envelope.body else { return }
        #expect(box.box.count == 8_192 + 48)
    }

    @Test func aReceiptOpensForTheSenderOfTheMessagesRead() throws {
        let message = try Self.direct("읽었어?")
        let receipt = try Document.sign(
            .receipt(Receipt(recipient: Self.alice.publicKey, read: [message.id])), created: Self.now, by: Self.bob)
        guard case .sealed(let box) = try Self.envelope(receipt, from: Self.bob, to: Self.alice).body else { return }
        #expect(DirectMessageKey(Self.alice).open(box) == .receipt(receipt, Receipt(recipient: Self.alice.publicKey, read: [message.id])))
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
