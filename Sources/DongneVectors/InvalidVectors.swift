@_spi(TestVectors) import DongneCore

/// Documents that break exactly one rule each, signed properly so that the rule is the only fault.
///
/// They are written byte by byte (`RawMap`), since the encoder and the signer refuse to make them.
enum InvalidVectors {
    /// (name, rule, bytes), in the order they appear in the file.
    static func all() throws -> [(name: String, rule: String, bytes: [UInt8])] {
        var list = VectorList(valid: try ValidVectors.all()[2].document.bytes)  // message-text
        encodingRules(&list)
        fieldRules(&list)
        return list.cases
    }

    /// Vectors for the rules of the encoding and the envelope (PROTOCOL.md §1.1, §1.2).
    private static func encodingRules(_ list: inout VectorList) {
        let valid = list.valid
        func add(_ name: String, _ rule: String, _ bytes: [UInt8]) { list.add(name, rule, bytes) }
        func add(_ name: String, _ rule: String, _ map: RawMap) { list.add(name, rule, map) }
        add(
            "too-large", "document-too-large",
            RawMap.header(kind: 100).with(8, .bytes([UInt8](repeating: 7, count: 16_400))))
        add("trailing-byte", "cbor-trailing-bytes", valid + [0x00])
        add("truncated", "cbor-truncated", Array(valid.dropLast()))
        add(
            "created-8-byte-argument-for-a-4-byte-value", "cbor-non-shortest-integer",
            RawMap.message().replacing(3, raw: [0x1b] + bigEndian(4_000_000_000, width: 8)))
        add("kind-1-byte-argument", "cbor-non-shortest-integer", RawMap.message().replacing(1, raw: [0x18, 0x02]))
        add(
            "location-double-that-fits-half", "cbor-non-shortest-float",
            RawMap.message(content: 11, .array([.float(37.5), .float(127)]))
                .replacing(
                    11, raw: [0x82, 0xfb] + bigEndian(37.5.bitPattern, width: 8) + CBOREncoder.encode(.float(127))))
        add("map-keys-out-of-order", "cbor-map-key-order", RawMap.message().swapping(2, 3))
        add("map-key-repeated", "cbor-map-key-order", RawMap.message().duplicating(9, .text("again")))
        add(
            "text-indefinite-length", "cbor-indefinite-length",
            RawMap.message().replacing(9, raw: [0x7f, 0x62] + Array("hi".utf8) + [0xff]))
        add(
            "created-tagged", "cbor-unsupported-item",
            RawMap.message().replacing(3, raw: [0xc1] + CBOREncoder.encode(.unsigned(ValidVectors.baseTime))))
        add("reason-undefined", "cbor-unsupported-item", RawMap.report().with(9, raw: [0xf7]))
        let deep = [UInt8](repeating: 0x81, count: CBORDecoder.maximumDepth - 1) + [0x00]  // 2 levels above it
        add("unknown-field-nested-too-deep", "cbor-nested-too-deep", RawMap.header(kind: 100).with(8, raw: deep))
        add("text-invalid-utf8", "invalid-utf8", RawMap.message().replacing(9, raw: [0x62, 0xff, 0xfe]))
        add("envelope-three-items", "envelope-shape", [0x83] + Array(valid.dropFirst()) + [0xf6])
        add("envelope-is-the-unsigned-map", "envelope-shape", RawMap.message().bytes)
        // Additional information 31 where no indefinite-length item can be: an integer head, a lone break byte.
        add("created-indefinite-argument", "cbor-indefinite-length", RawMap.message().replacing(3, raw: [0x1f]))
        add("reason-break-byte", "cbor-indefinite-length", RawMap.report().with(9, raw: [0xff]))
        // NaNs other than f97e00, in a field of an unknown kind, where f97e00 itself is accepted.
        add(
            "unknown-field-nan-with-payload", "cbor-non-shortest-float",
            RawMap.header(kind: 100).with(8, raw: [0xf9, 0x7e, 0x01]))
        add(
            "unknown-field-nan-as-double", "cbor-non-shortest-float",
            RawMap.header(kind: 100).with(8, raw: [0xfb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0]))
        add(
            "kind-reserved-additional-information", "cbor-unsupported-item",
            RawMap.message().replacing(1, raw: [0x1c]))
    }

    /// Vectors for the rules of fields, kinds and signatures (PROTOCOL.md §1.3 to §1.8).
    private static func fieldRules(_ list: inout VectorList) {
        let valid = list.valid
        func add(_ name: String, _ rule: String, _ bytes: [UInt8]) { list.add(name, rule, bytes) }
        func add(_ name: String, _ rule: String, _ map: RawMap, by key: SigningKey = VectorKeys.alice) {
            list.add(name, rule, map, by: key)
        }
        add("version-2", "unsupported-version", RawMap.message().with(0, .unsigned(2)))
        add("message-without-sender-name", "missing-field", RawMap.message().without(8))
        add("message-with-extra-field", "unexpected-field", RawMap.message().with(20, .text("extra")))
        add("profile-with-channel", "unexpected-field", RawMap.profile().with(4, .bytes(ValidVectors.seoul.id.bytes)))
        add("created-as-text", "wrong-type", RawMap.message().with(3, .text("yesterday")))
        let shortStamp = Array(VectorKeys.alice.stamp!.bytes.prefix(7))
        add("stamp-7-bytes", "wrong-length", RawMap.message().with(5, .bytes(shortStamp)))
        add("stamp-as-unsigned", "wrong-type", RawMap.message().with(5, .unsigned(17_550_736)))
        add("unknown-kind-with-stamp-as-text", "wrong-type", RawMap.header(kind: 100).with(5, .text("stamp")))
        add(
            "author-31-bytes", "wrong-length",
            RawMap.message().with(2, .bytes(Array(VectorKeys.alice.publicKey.bytes.dropLast()))))
        add("signature-63-bytes", "wrong-length", Array(valid.dropLast(66)) + [0x58, 0x3f] + Array(valid.suffix(63)))
        add("text-only-white-space", "empty-text", RawMap.message(content: 9, .text(" \n\t ")))
        add("text-4001-bytes", "text-too-long", RawMap.message(content: 9, .text(String(repeating: "a", count: 4_001))))
        add("text-with-escape", "control-character", RawMap.message(content: 9, .text("red \u{1b}[31m")))
        add("sender-name-with-line-feed", "control-character", RawMap.message().with(8, .text("민\n지")))
        add("latitude-nan", "non-finite-number", RawMap.message(content: 11, .array([.float(.nan), .float(127)])))
        add(
            "longitude-infinite", "non-finite-number",
            RawMap.message(content: 11, .array([.float(37), .float(.infinity)])))
        add("latitude-90.5", "latitude-out-of-range", RawMap.message(content: 11, .array([.float(90.5), .float(127)])))
        add(
            "longitude-minus-180.5", "longitude-out-of-range",
            RawMap.message(content: 11, .array([.float(37), .float(-180.5)])))
        add("created-2^53", "created-out-of-range", RawMap.message().with(3, .unsigned(1 << 53)))
        add(
            "message-text-and-location", "message-content-not-exactly-one",
            RawMap.message().with(11, .array([.float(37), .float(127)])))
        add("message-without-content", "message-content-not-exactly-one", RawMap.message().without(9))
        add(
            "channel-name-conjoining-jamo", "channel-name-not-normalized",
            RawMap.channel(name: "\u{1109}\u{1165}\u{110B}\u{116E}\u{11AF}"))
        add("channel-name-trailing-space", "channel-name-not-normalized", RawMap.channel(name: "서울 "))
        add(
            "channel-id-mismatch", "channel-id-mismatch",
            RawMap.channel(name: "서울특별시").with(4, .bytes(ValidVectors.gyeonggi.id.bytes)))
        add("signed-by-another-key", "bad-signature", RawMap.message(), by: VectorKeys.bob)
        add("signature-bit-flipped", "bad-signature", Array(valid.dropLast()) + [valid.last! ^ 0x01])
        add("direct-photo-without-key", "missing-field", RawMap.direct(content: 10, .bytes(ValidVectors.photo.bytes)))
        add("direct-text-with-photo-key", "unexpected-field", RawMap.direct().with(12, .bytes(VectorKeys.photoKey)))
        add("receipt-reads-nothing", "size-out-of-range", RawMap.receipt(count: 0), by: VectorKeys.bob)
        add("receipt-reads-65", "size-out-of-range", RawMap.receipt(count: 65), by: VectorKeys.bob)
        add("sealed-box-not-padded", "size-not-padded", RawMap.sealed(boxSize: 600), by: VectorKeys.wrapper)
        add(
            "sealed-created-not-whole-hour", "created-not-whole-hour",
            RawMap.sealed().with(3, .unsigned(ValidVectors.baseTime)), by: VectorKeys.wrapper)
        add(
            "sealed-outside-direct-space", "channel-id-mismatch",
            RawMap.sealed().with(4, .bytes(ValidVectors.seoul.id.bytes)), by: VectorKeys.wrapper)
        let photo = CBOR.bytes(ValidVectors.photo.bytes)
        add("sealed-photo-without-size", "missing-field", RawMap.sealed().with(9, photo), by: VectorKeys.wrapper)
        add(
            "sealed-photo-size-without-photo", "missing-field", RawMap.sealed().with(10, .unsigned(100_000)),
            by: VectorKeys.wrapper)
        add(
            "sealed-photo-size-zero", "size-out-of-range", RawMap.sealed().with(9, photo).with(10, .unsigned(0)),
            by: VectorKeys.wrapper)
        add(
            "sealed-photo-size-over-limit", "size-out-of-range",
            RawMap.sealed().with(9, photo).with(10, .unsigned(UInt64(BlobLimits.maximumSealedPhotoBytes) + 1)),
            by: VectorKeys.wrapper)
        add(
            "sealed-photo-hash-31-bytes", "wrong-length",
            RawMap.sealed().with(9, .bytes(Array(ValidVectors.photo.bytes.prefix(31)))).with(10, .unsigned(100_000)),
            by: VectorKeys.wrapper)
        add(
            "location-three-items", "wrong-type",
            RawMap.message(content: 11, .array([.float(37), .float(127), .float(0)])))
        add("location-one-item", "wrong-type", RawMap.message(content: 11, .array([.float(37)])))
    }

    static func bigEndian(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}

/// The invalid vectors as they are collected.
struct VectorList {
    /// A valid document to damage.
    let valid: [UInt8]
    private(set) var cases: [(name: String, rule: String, bytes: [UInt8])] = []

    init(valid: [UInt8]) { self.valid = valid }

    mutating func add(_ name: String, _ rule: String, _ bytes: [UInt8]) { cases.append((name, rule, bytes)) }

    mutating func add(_ name: String, _ rule: String, _ map: RawMap, by key: SigningKey = VectorKeys.alice) {
        add(name, rule, Document.signedEnvelope(unsigned: map.bytes, signedBy: key))
    }
}

/// An unsigned document map written entry by entry, in the order given, with raw bytes where needed.
struct RawMap {
    var entries: [(key: UInt64, value: [UInt8])]

    var bytes: [UInt8] {
        var output: [UInt8] = []
        CBOREncoder.appendHead(major: 5, argument: UInt64(entries.count), to: &output)
        for entry in entries { output += CBOREncoder.encode(.unsigned(entry.key)) + entry.value }
        return output
    }

    /// Sets `key` to `value` (replacing it in place, or appending it in key order if absent).
    func with(_ key: UInt64, _ value: CBOR) -> RawMap { with(key, raw: CBOREncoder.encode(value)) }

    func with(_ key: UInt64, raw: [UInt8]) -> RawMap {
        var copy = self
        if let index = copy.entries.firstIndex(where: { $0.key == key }) {
            copy.entries[index].value = raw
        } else {
            let index = copy.entries.firstIndex(where: { $0.key > key }) ?? copy.entries.count
            copy.entries.insert((key, raw), at: index)
        }
        return copy
    }

    /// Adds a second entry for `key` right after the first.
    func duplicating(_ key: UInt64, _ value: CBOR) -> RawMap {
        var copy = self
        let index = copy.entries.firstIndex(where: { $0.key == key })!
        copy.entries.insert((key, CBOREncoder.encode(value)), at: index + 1)
        return copy
    }

    func replacing(_ key: UInt64, raw: [UInt8]) -> RawMap {
        var copy = self
        copy.entries[copy.entries.firstIndex(where: { $0.key == key })!].value = raw
        return copy
    }

    func without(_ key: UInt64) -> RawMap { RawMap(entries: entries.filter { $0.key != key }) }

    func swapping(_ first: UInt64, _ second: UInt64) -> RawMap {
        var copy = self
        let a = copy.entries.firstIndex(where: { $0.key == first })!
        let b = copy.entries.firstIndex(where: { $0.key == second })!
        copy.entries.swapAt(a, b)
        return copy
    }

    static func header(kind: UInt64, author: SigningKey = VectorKeys.alice, channel: ChannelID? = nil) -> RawMap {
        var map = RawMap(entries: [
            (0, CBOREncoder.encode(.unsigned(1))), (1, CBOREncoder.encode(.unsigned(kind))),
            (2, CBOREncoder.encode(.bytes(author.publicKey.bytes))),
            (3, CBOREncoder.encode(.unsigned(ValidVectors.baseTime))),
        ])
        if let channel { map.entries.append((4, CBOREncoder.encode(.bytes(channel.bytes)))) }
        if let stamp = author.stamp { map.entries.append((5, CBOREncoder.encode(.bytes(stamp.bytes)))) }
        return map
    }

    static func message(content key: UInt64 = 9, _ value: CBOR = .text("hello")) -> RawMap {
        header(kind: 2, channel: ValidVectors.seoul.id).with(8, .text("민지")).with(key, value)
    }

    static func report() -> RawMap {
        header(kind: 3, channel: ValidVectors.seoul.id).with(8, .bytes(ValidVectors.photo.bytes))
    }

    static func profile() -> RawMap { header(kind: 5).with(8, .text("민지")) }

    static func channel(name: String) -> RawMap {
        let id = BLAKE2b.hash256(Array(name.utf8), prefix: ChannelName.idPrefix)
        return header(kind: 1, channel: ChannelID(id)).with(8, .text(name))
    }

    static func direct(content key: UInt64 = 9, _ value: CBOR = .text("안녕")) -> RawMap {
        header(kind: 6).with(8, .bytes(VectorKeys.bob.publicKey.bytes)).with(key, value)
    }

    static func receipt(count: Int) -> RawMap {
        let ids = (0..<count).map { CBOR.bytes([UInt8](repeating: UInt8(truncatingIfNeeded: $0), count: 32)) }
        return header(kind: 7, author: VectorKeys.bob).with(8, .bytes(VectorKeys.alice.publicKey.bytes))
            .with(9, .array(ids))
    }

    /// An envelope of random-looking bytes (nobody can open it), dated by a whole hour.
    static func sealed(boxSize: Int = DirectSpace.boxSizes[0]) -> RawMap {
        header(kind: 8, author: VectorKeys.wrapper, channel: DirectSpace.id)
            .with(3, .unsigned(DirectSpace.envelopeCreated(at: ValidVectors.baseTime)))
            .with(8, .bytes([UInt8](repeating: 0x5a, count: boxSize)))
    }
}
