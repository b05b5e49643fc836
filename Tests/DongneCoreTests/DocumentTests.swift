import Testing

@testable import DongneCore

@Suite struct DocumentTests {
    static let alice = SigningKey(seed: [UInt8](repeating: 1, count: 32))!
    static let bob = SigningKey(seed: [UInt8](repeating: 2, count: 32))!
    static let seoul = try! ChannelName(normalizing: "서울특별시")
    static let someID = DocumentID(BLAKE2b.hash256([1, 2, 3]))
    static let photo = BlobHash(BLAKE2b.hash256([4, 5, 6]))

    /// One body of every kind, optional fields both present and absent.
    static let bodies: [DocumentBody] = [
        .channel(ChannelInfo(name: seoul, description: "서울 이야기")),
        .channel(ChannelInfo(name: seoul)),
        .message(Message(channel: seoul.id, senderName: "민지", content: .text("여기 떡볶이 맛있어요\n두 줄"))),
        .message(Message(channel: seoul.id, senderName: "민지", content: .photo(photo))),
        .message(
            Message(channel: seoul.id, senderName: "민지", content: .location(Location(latitude: -90, longitude: 180)))),
        .message(
            Message(
                channel: seoul.id, senderName: "민지", content: .location(Location(latitude: 37.5665, longitude: 126.978))
            )),
        .report(Report(channel: seoul.id, message: someID, reason: "spam")),
        .report(Report(channel: seoul.id, message: someID, reason: "")),
        .report(Report(channel: seoul.id, message: someID)),
        .retract(Retract(channel: seoul.id, message: someID)),
        .profile(Profile(displayName: "민지", avatar: photo)),
        .profile(Profile(displayName: "민지")),
        .direct(DirectMessage(recipient: bob.publicKey, content: .text("안녕"))),
        .direct(DirectMessage(recipient: bob.publicKey, content: .photo(photo), photoKey: [UInt8](repeating: 7, count: 32))),
        .receipt(Receipt(recipient: bob.publicKey, read: [someID])),
        .unknown(kind: 99, channel: seoul.id, fields: [CBORMapEntry(.unsigned(7), .text("x"))]),
        .unknown(kind: 1 << 40, channel: nil, fields: []),
    ]

    @Test("every kind round-trips: sign, then verify the bytes, gives the same document", arguments: 0..<bodies.count)
    func roundTrip(index: Int) throws {
        let signed = try Document.sign(Self.bodies[index], created: 1_764_400_000_000, by: Self.alice)
        let decoded = try Document(verifying: signed.bytes)
        #expect(decoded.body == Self.bodies[index])
        #expect(decoded.id == signed.id)
        #expect(decoded.author == Self.alice.publicKey)
        #expect(decoded.created == 1_764_400_000_000)
        #expect(decoded.channel == Self.bodies[index].channel)
        #expect(decoded.bytes == signed.bytes)
    }

    @Test("any single flipped byte anywhere in a signed document is rejected", arguments: 0..<bodies.count)
    func flippedBytes(index: Int) throws {
        let bytes = try Document.sign(Self.bodies[index], created: 1_764_400_000_000, by: Self.alice).bytes
        for position in bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xff] {
                var flipped = bytes
                flipped[position] ^= mask
                #expect(throws: DocumentError.self, "byte \(position) ^ \(mask)") { try Document(verifying: flipped) }
            }
        }
    }

    static let refusedBodies: [(DocumentBody, DocumentError)] = [
        (.message(Message(channel: seoul.id, senderName: "민지", content: .text(" \n"))), .emptyText(field: "text")),
        (.message(Message(channel: seoul.id, senderName: "", content: .text("hi"))), .emptyText(field: "senderName")),
        (
            .message(
                Message(channel: seoul.id, senderName: "민지", content: .text(String(repeating: "가", count: 1_334)))),
            .textTooLong(field: "text", bytes: 4_002, limit: 4_000)
        ),
        (
            .message(
                Message(
                    channel: seoul.id, senderName: "민지", content: .location(Location(latitude: 90.000001, longitude: 0))
                )),
            .latitudeOutOfRange(90.000001)
        ),
        (
            .message(
                Message(
                    channel: seoul.id, senderName: "민지", content: .location(Location(latitude: 0, longitude: -180.5)))),
            .longitudeOutOfRange(-180.5)
        ),
        (
            .message(
                Message(channel: seoul.id, senderName: "민지", content: .location(Location(latitude: .nan, longitude: 0)))
            ),
            .nonFiniteNumber(field: "latitude")
        ),
        (
            .message(
                Message(
                    channel: seoul.id, senderName: "민지", content: .location(Location(latitude: 0, longitude: .infinity))
                )),
            .nonFiniteNumber(field: "longitude")
        ),
        (.profile(Profile(displayName: "a\u{7}b")), .controlCharacter(field: "displayName")),
        (.unknown(kind: 2, channel: nil, fields: []), .wrongType(field: "kind")),
        (
            .unknown(kind: 99, channel: nil, fields: [CBORMapEntry(.unsigned(3), .null)]),
            .unexpectedField("unsigned(3)")
        ),
        (.direct(DirectMessage(recipient: bob.publicKey, content: .photo(photo))), .missingField("photoKey")),
        (
            .direct(DirectMessage(recipient: bob.publicKey, content: .text("hi"), photoKey: [UInt8](repeating: 7, count: 32))),
            .unexpectedField("photoKey")
        ),
        (.receipt(Receipt(recipient: bob.publicKey, read: [])), .sizeOutOfRange(field: "read", size: 0, range: 1...64)),
        (.sealed(SealedBox(box: [UInt8](repeating: 1, count: 100))), .notAPaddedSize(field: "box", size: 100)),
    ]

    @Test("signing refuses a body that breaks a rule, with the rule's typed error", arguments: 0..<refusedBodies.count)
    func signingRefuses(index: Int) {
        let (body, error) = Self.refusedBodies[index]
        #expect(throws: error) { try Document.sign(body, created: 1, by: Self.alice) }
    }

    @Test func createdBeyondTheLimitIsRefused() {
        #expect(throws: DocumentError.createdOutOfRange(1 << 53)) {
            try Document.sign(.profile(Profile(displayName: "a")), created: 1 << 53, by: Self.alice)
        }
    }

    @Test func oversizeInputIsRefusedBeforeDecoding() {
        let huge = [UInt8](repeating: 0xff, count: DocumentLimits.maximumDocumentBytes + 1)
        #expect(throws: DocumentError.tooLarge(size: huge.count, limit: DocumentLimits.maximumDocumentBytes)) {
            try Document(verifying: huge)
        }
    }

    @Test func randomInputNeverTraps() {
        var generator = SplitMix64(seed: 7)
        let valid = try! Document.sign(Self.bodies[2], created: 5, by: Self.alice).bytes
        for _ in 0..<5_000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: bytes.indices, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            bytes = Array(bytes.prefix(Int.random(in: 1...bytes.count, using: &generator)))
            #expect(throws: DocumentError.self) { try Document(verifying: bytes) }
        }
    }
}

@Suite struct ChannelNameTests {
    @Test func composedAndDecomposedHangulNameTheSameChannel() throws {
        let composed = try ChannelName(normalizing: "서울특별시")
        let jamo = try ChannelName(
            normalizing:
                "\u{1109}\u{1165}\u{110B}\u{116E}\u{11AF}\u{1110}\u{1173}\u{11A8}\u{1107}\u{1167}\u{11AF}\u{1109}\u{1175}"
        )
        let padded = try ChannelName(normalizing: "  서울특별시\n")
        #expect(jamo == composed)
        #expect(padded == composed)
        #expect(composed.id == ChannelID(BLAKE2b.hash256(Array("서울특별시".utf8), prefix: ChannelName.idPrefix)))
        #expect(composed.id != (try ChannelName(normalizing: "경기도")).id)
    }

    @Test func unusableNamesAreRefused() {
        #expect(throws: DocumentError.emptyText(field: "name")) { try ChannelName(normalizing: "   ") }
        #expect(throws: DocumentError.controlCharacter(field: "name")) { try ChannelName(normalizing: "a\u{0}b") }
        #expect(throws: DocumentError.channelNameNotNormalized) { try ChannelName(exactly: "서울 ") }
    }
}

@Suite struct KeyTests {
    @Test func zBase32MatchesItsSpecification() {
        // The examples of Zooko's z-base-32 specification (24-bit inputs).
        #expect(Fingerprint.zBase32([0xf0, 0xbf, 0xc7]) == "6n9hq")
        #expect(Fingerprint.zBase32([0xd4, 0x7a, 0x04]) == "4t7ye")
        #expect(Fingerprint.zBase32([]) == "")
    }

    @Test func fingerprintsHaveAShortPrefixAndAGroupedFullForm() {
        let key = SigningKey(seed: [UInt8](repeating: 9, count: 32))!.publicKey
        #expect(key.fingerprint.full.count == 52)
        #expect(key.fingerprint.full.hasPrefix(key.fingerprint.short))
        #expect(key.fingerprint.short.count == 8)
        #expect(key.fingerprint.grouped.split(separator: " ").count == 13)
    }

    @Test func secretsNeverAppearInDescriptions() {
        let key = SigningKey(seed: [UInt8](repeating: 0xab, count: 32))!
        var dumped = ""
        dump(key, to: &dumped)
        for text in ["\(key)", String(describing: key), String(reflecting: key), dumped] {
            #expect(!text.contains("abab"))
            #expect(!text.contains("171, 171"))
        }
    }

    @Test func signaturesVerifyOnlyForTheirMessageAndKey() {
        let alice = SigningKey.generate(), bob = SigningKey.generate()
        let signature = alice.sign([1, 2, 3])
        #expect(alice.publicKey.isValidSignature(signature, of: [1, 2, 3]))
        #expect(!alice.publicKey.isValidSignature(signature, of: [1, 2, 4]))
        #expect(!bob.publicKey.isValidSignature(signature, of: [1, 2, 3]))
    }
}
