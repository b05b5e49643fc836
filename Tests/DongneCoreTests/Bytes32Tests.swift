import DongneCore
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
}
