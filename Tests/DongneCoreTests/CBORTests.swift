import DongneCore
import Testing

/// RFC 8949 Appendix A examples that are in deterministic form, plus the refusals of §4.2.1.
@Suite struct CBORTests {
    static let appendixA: [(CBOR, String)] = [
        (.unsigned(0), "00"), (.unsigned(23), "17"), (.unsigned(24), "1818"), (.unsigned(100), "1864"),
        (.unsigned(1000), "1903e8"), (.unsigned(1_000_000), "1a000f4240"),
        (.unsigned(1_000_000_000_000), "1b000000e8d4a51000"), (.unsigned(UInt64.max), "1bffffffffffffffff"),
        (.negative(0), "20"), (.negative(9), "29"), (.negative(99), "3863"), (.negative(999), "3903e7"),
        (.float(0.0), "f90000"), (.float(-0.0), "f98000"), (.float(1.0), "f93c00"), (.float(1.1), "fb3ff199999999999a"),
        (.float(1.5), "f93e00"), (.float(65504.0), "f97bff"), (.float(100000.0), "fa47c35000"),
        (.float(3.4028234663852886e+38), "fa7f7fffff"), (.float(1.0e+300), "fb7e37e43c8800759c"),
        (.float(5.960464477539063e-8), "f90001"), (.float(0.00006103515625), "f90400"), (.float(-4.0), "f9c400"),
        (.float(-4.1), "fbc010666666666666"), (.float(.infinity), "f97c00"), (.float(-.infinity), "f9fc00"),
        (.bool(false), "f4"), (.bool(true), "f5"), (.null, "f6"),
        (.bytes([]), "40"), (.bytes([1, 2, 3, 4]), "4401020304"),
        (.text(""), "60"), (.text("a"), "6161"), (.text("IETF"), "6449455446"), (.text("\"\\"), "62225c"),
        (.text("\u{00fc}"), "62c3bc"), (.text("\u{6c34}"), "63e6b0b4"), (.text("\u{10151}"), "64f0908591"),
        (.array([]), "80"), (.array([.unsigned(1), .unsigned(2), .unsigned(3)]), "83010203"),
        (
            .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])]),
            "8301820203820405"
        ),
        (.map([]), "a0"),
        (.map([CBORMapEntry(.unsigned(1), .unsigned(2)), CBORMapEntry(.unsigned(3), .unsigned(4))]), "a201020304"),
    ]

    @Test("RFC 8949 Appendix A values encode to the listed bytes and decode back", arguments: 0..<appendixA.count)
    func appendixExample(index: Int) throws {
        let (value, hex) = Self.appendixA[index]
        #expect(Hex.encode(CBOREncoder.encode(value)) == hex)
        #expect(try CBORDecoder.decode(Hex.decode(hex)!) == value)
    }

    @Test func nanEncodesAsTheOneCanonicalNaN() throws {
        #expect(Hex.encode(CBOREncoder.encode(.float(.nan))) == "f97e00")
        guard case .float(let value) = try CBORDecoder.decode([0xf9, 0x7e, 0x00]) else {
            Issue.record("not a float"); return
        }
        #expect(value.isNaN)
        #expect(throws: CBORError.nonShortestFloat) { try CBORDecoder.decode(Hex.decode("fa7fc00000")!) }
        #expect(throws: CBORError.nonShortestFloat) { try CBORDecoder.decode(Hex.decode("f97e01")!) }
    }

    @Test func mapKeysSortBytewiseByTheirEncodings() {
        let map = CBOR.map([
            CBORMapEntry(.text("aa"), .unsigned(5)), CBORMapEntry(.negative(0), .unsigned(3)),
            CBORMapEntry(.unsigned(100), .unsigned(2)), CBORMapEntry(.text("z"), .unsigned(4)),
            CBORMapEntry(.unsigned(10), .unsigned(1)),
        ])
        // 0a < 1864 < 20 < 617a < 626161 (RFC 8949 §4.2.1: shorter keys do not sort first by length, bytes do)
        #expect(Hex.encode(CBOREncoder.encode(map)) == "a50a01186402200361" + "7a0462616105")
    }

    static let refusals: [(String, CBORError)] = [
        ("1817", .nonShortestInteger), ("190017", .nonShortestInteger), ("1a0000ffff", .nonShortestInteger),
        ("1b00000000ffffffff", .nonShortestInteger), ("3800", .nonShortestInteger), ("5801ff", .nonShortestInteger),
        ("fa3f800000", .nonShortestFloat), ("fa3fc00000", .nonShortestFloat), ("fb3ff8000000000000", .nonShortestFloat),
        ("5fff", .indefiniteLength), ("9fff", .indefiniteLength), ("bfff", .indefiniteLength),
        ("ff", .indefiniteLength),
        ("c000", .unsupportedItem(initialByte: 0xc0)), ("f7", .unsupportedItem(initialByte: 0xf7)),
        ("f820", .unsupportedItem(initialByte: 0xf8)), ("1c", .unsupportedItem(initialByte: 0x1c)),
        ("a203040102", .unsortedOrDuplicateMapKey), ("a201020103", .unsortedOrDuplicateMapKey),
        ("0000", .trailingBytes(count: 1)), ("", .truncated), ("19ff", .truncated), ("62c3", .truncated),
        ("5bffffffffffffffff", .truncated), ("9bffffffffffffffff", .truncated), ("bbffffffffffffffff", .truncated),
        ("62c328", .invalidUTF8), ("63eda080", .invalidUTF8),
    ]

    @Test("non-canonical or unsupported input is refused with its reason", arguments: 0..<refusals.count)
    func refusal(index: Int) {
        let (hex, error) = Self.refusals[index]
        #expect(throws: error) { try CBORDecoder.decode(Hex.decode(hex)!) }
    }

    @Test func nestingDeeperThanTheLimitIsRefused() throws {
        let allowed = [UInt8](repeating: 0x81, count: CBORDecoder.maximumDepth) + [0x00]
        _ = try CBORDecoder.decode(allowed)
        #expect(throws: CBORError.nestedTooDeep) { try CBORDecoder.decode([0x81] + allowed) }
    }

    @Test func randomBytesNeverTrapAndWhatDecodesReencodesIdentically() {
        var generator = SplitMix64(seed: 0x5eed)
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 1...24, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            if let value = try? CBORDecoder.decode(bytes) {
                #expect(CBOREncoder.encode(value) == bytes)
            }
        }
    }
}
