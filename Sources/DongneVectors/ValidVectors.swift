@_spi(TestVectors) import DongneCore

/// The valid documents of the vector file: at least one of every kind, and the optional fields both ways.
enum ValidVectors {
    static let baseTime: UInt64 = 1_764_400_000_000
    static let seoul = try! ChannelName(normalizing: "서울특별시")
    static let gyeonggi = try! ChannelName(normalizing: "경기도")
    static let photo = BlobHash(BLAKE2b.hash256(Array("a photo manifest".utf8)))
    static let avatar = BlobHash(BLAKE2b.hash256(Array("an avatar manifest".utf8)))

    /// (name, document), in the order they appear in the file.
    static func all() throws -> [(name: String, document: Document)] {
        let alice = VectorKeys.alice, bob = VectorKeys.bob
        var cases: [(String, Document)] = []
        func add(_ name: String, _ body: DocumentBody, by key: SigningKey) throws {
            cases.append((name, try Document.sign(body, created: baseTime + UInt64(cases.count) * 1_000, by: key)))
        }
        try add("channel", .channel(ChannelInfo(name: seoul, description: "서울 이야기")), by: alice)
        try add("channel-without-description", .channel(ChannelInfo(name: gyeonggi)), by: bob)
        let text = try message(.text("여기 떡볶이 맛있어요"))
        try add("message-text", text, by: alice)
        try add("message-photo", try message(.photo(photo)), by: alice)
        try add("message-location", try message(.location(Location(latitude: 37.5665, longitude: 126.978))), by: bob)
        try add(
            "message-location-half-precision", try message(.location(Location(latitude: 37.5, longitude: -0.0))),
            by: bob)
        let textID = cases[2].1.id
        try add("report", .report(Report(channel: seoul.id, message: textID, reason: "광고")), by: bob)
        try add("report-without-reason", .report(Report(channel: seoul.id, message: textID)), by: VectorKeys.carol)
        try add("retract", .retract(Retract(channel: seoul.id, message: textID)), by: alice)
        try add("profile", .profile(Profile(displayName: "민지", avatar: avatar)), by: alice)
        try add("profile-without-avatar", .profile(Profile(displayName: "준호")), by: bob)
        try add("direct", .direct(DirectMessage(recipient: bob.publicKey, content: .text("안녕하세요"))), by: alice)
        let direct = cases.last!.1
        let place = Location(latitude: 37.5759, longitude: 126.9768)
        try add("direct-location", .direct(DirectMessage(recipient: bob.publicKey, content: .location(place))), by: alice)
        let sealedPhoto = try BlobVectors.sealedPhoto().manifest
        try add(
            "direct-photo",
            .direct(DirectMessage(
                recipient: alice.publicKey, content: .photo(sealedPhoto.hash), photoKey: VectorKeys.photoKey)),
            by: bob)
        let directPhoto = cases.last!.1
        try add("receipt", .receipt(Receipt(recipient: alice.publicKey, read: [direct.id])), by: bob)
        let receipt = cases.last!.1
        cases.append(
            ("sealed", try envelope(direct, from: alice, to: bob.publicKey, seed: VectorKeys.ephemeralSeeds.recipient)))
        cases.append(
            ("sealed-receipt",
             try envelope(receipt, from: bob, to: alice.publicKey, seed: VectorKeys.ephemeralSeeds.author)))
        cases.append(
            ("sealed-photo",
             try SealedEnvelope.seal(
                directPhoto, from: bob, to: alice.publicKey, wrapper: VectorKeys.photoWrapper, at: baseTime + 60_000,
                ephemeralSeed: VectorKeys.ephemeralSeeds.photo,
                photo: SealedPhotoReference(hash: sealedPhoto.hash, size: sealedPhoto.size))))
        let future: [CBORMapEntry] = [
            CBORMapEntry(.unsigned(8), .text("a kind from the future")),
            CBORMapEntry(.unsigned(9), .array([.unsigned(1), .negative(1)])),
        ]
        try add("unknown-kind-in-channel", .unknown(kind: 100, channel: seoul.id, fields: future), by: alice)
        try add("unknown-kind-largest-number", .unknown(kind: .max, channel: nil, fields: []), by: alice)
        try add(
            "unknown-kind-without-channel",
            .unknown(kind: 4_242, channel: nil, fields: [CBORMapEntry(.unsigned(6), .bytes([1, 2, 3]))]), by: bob)
        return cases
    }

    /// `inner` sealed to `recipient` by the vectors' one-time key, in the hour of the base time.
    static func envelope(_ inner: Document, from author: SigningKey, to recipient: PublicKey, seed: [UInt8]) throws
        -> Document
    {
        try SealedEnvelope.seal(
            inner, from: author, to: recipient, wrapper: VectorKeys.wrapper, at: baseTime + 60_000, ephemeralSeed: seed)
    }

    /// Envelopes that are valid documents but that their recipient refuses to open, with the rule it applies
    /// (PROTOCOL.md §1.8): Alice's `direct` to Bob, authenticated by Carol (as if Carol wrote in Alice's name), and
    /// sealed to Bob with the first ephemeral seed.
    static func unopenable() throws -> [(name: String, rule: String, sealedTo: String, document: Document)] {
        let inner = try Document.sign(
            .direct(DirectMessage(recipient: VectorKeys.bob.publicKey, content: .text("안녕하세요"))),
            created: baseTime, by: VectorKeys.alice)
        let carolsKey = DirectMessageKey(VectorKeys.carol).conversationKey(with: VectorKeys.bob.publicKey)!
        let padded = SealedEnvelope.authenticatedAndPadded(inner.bytes, conversationKey: carolsKey)!
        let box = try SealedEnvelope.sealPadded(
            padded, to: VectorKeys.bob.publicKey, ephemeralSeed: VectorKeys.ephemeralSeeds.recipient)
        let envelope = try Document.sign(
            .sealed(SealedBox(box: box)), created: DirectSpace.envelopeCreated(at: baseTime + 60_000),
            by: VectorKeys.wrapper)
        return [("sealed-bad-authenticator", "bad-authenticator", "bob", envelope), try photoMismatch()]
    }

    /// Bob's photo message to Alice (the `direct-photo` vector), rightly authenticated, in an envelope that names
    /// another photo (the plain manifest of the same blob) of the same size: Alice refuses it (`photo-mismatch`).
    static func photoMismatch() throws -> (name: String, rule: String, sealedTo: String, document: Document) {
        let sealed = try BlobVectors.sealedPhoto().manifest
        let inner = try Document.sign(
            .direct(DirectMessage(
                recipient: VectorKeys.alice.publicKey, content: .photo(sealed.hash), photoKey: VectorKeys.photoKey)),
            created: baseTime, by: VectorKeys.bob)
        let other = SealedPhotoReference(hash: try BlobVectors.plainManifest().hash, size: sealed.size)
        let envelope = try SealedEnvelope.seal(
            inner, from: VectorKeys.bob, to: VectorKeys.alice.publicKey, wrapper: VectorKeys.photoWrapper,
            at: baseTime + 60_000, ephemeralSeed: VectorKeys.ephemeralSeeds.photo, photo: other)
        return ("sealed-photo-mismatch", "photo-mismatch", "alice", envelope)
    }

    /// The inner documents of the envelope vectors, by envelope name, and whom each is sealed to.
    static let envelopeContents = [
        "sealed": ("direct", "bob"), "sealed-receipt": ("receipt", "alice"), "sealed-photo": ("direct-photo", "alice"),
    ]

    static func message(_ content: MessageContent) throws -> DocumentBody {
        .message(Message(channel: seoul.id, senderName: "민지", content: content))
    }
}
