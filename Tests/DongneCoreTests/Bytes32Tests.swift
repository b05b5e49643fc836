import DongneCore
import Foundation
import Testing

@Suite struct Bytes32Tests {
    @Test func everyKindOfCollectionGivesTheSameValueAndTheBytesComeBack() throws {
        let bytes = (0..<32).map { UInt8(truncatingIfNeeded: $0 * 37 + 5) }
        let fromArray = try #require(Bytes32(bytes))
        let fromSlice = try #require(Bytes32(([0xff] + bytes + [0xee])[1...32]))
        let fromLazy = try #require(Bytes32((0..<32).lazy.map { UInt8(truncatingIfNeeded: $0 * 37 + 5) }))  // not contiguous
        #expect(fromArray == fromSlice && fromSlice == fromLazy)
        #expect(fromArray.bytes == bytes)
        #expect(Bytes32(bytes.dropLast()) == nil && Bytes32(bytes + [0]) == nil)
        var larger = bytes
        larger[31] += 1
        #expect(fromArray < Bytes32(larger)!, "ordered bytewise")
        larger = bytes
        larger[0] += 1
        #expect(Bytes32(larger)!.bytes == larger)
    }

    /// `hex` is written from the words; Foundation's `%02x`, byte by byte, is the independent writer.
    @Test func hexFromTheWordsIsTheBytesInLowercaseHex() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let value = try #require(Bytes32(bytes))
            #expect(value.hex == bytes.map { String(format: "%02x", $0) }.joined())
            #expect(Hex.encode(bytes) == value.hex && Hex.decode(value.hex) == bytes)
        }
        #expect(Bytes32.zero.hex == String(repeating: "0", count: 64))
    }

    /// What is appended to JSON being written is what the `String` forms say: bytes, hex, fingerprints.
    @Test func appendedFormsAreTheStringForms() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let value = try #require(Bytes32(bytes))
            #expect(value.withBytes { Array($0) } == bytes)
            var written: [UInt8] = Array("x".utf8)
            value.withBytes { Hex.append($0, to: &written) }
            #expect(written == Array(("x" + value.hex).utf8))
            let key = PublicKey(raw: value)
            written = []
            Fingerprint.appendFull(of: key, to: &written)
            #expect(written == Array(key.fingerprint.full.utf8) && written.count == 52)
        }
    }
}
