import DongneCore
import FuzzSupport

/// Session frames (`FrameReader`), which cut the TCP stream into Noise messages: the stream, handed over in
/// pieces of any sizes, gives the same frames as a direct reading of it, and framing them again gives back the
/// bytes they came from, with only an unfinished frame left buffered.
///
/// Input: a byte that seeds the piece sizes, then the stream.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrame(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    var sizes = SplitMix64(seed: UInt64(input.byte()))
    let stream = input.rest()
    var reader = FrameReader()
    var frames: [[UInt8]] = []
    var offset = 0
    while offset < stream.count {
        // Mostly small pieces, some empty, some large enough to pass the reader's 4,096-byte compaction.
        let largest = sizes.next() % 8 == 0 ? 5_000 : 70
        let size = Int.random(in: 0...largest, using: &sizes)
        let end = min(offset + size, stream.count)
        frames += reader.append(Array(stream[offset..<end]))
        offset = end
    }
    let (expected, consumed) = directReading(stream)
    expect(frames == expected, "pieces gave \(frames.count) frames, a direct reading \(expected.count)")
    expect(reader.bufferedCount == stream.count - consumed, "\(reader.bufferedCount) bytes left buffered")
    expect(frames.flatMap(FrameReader.frame).elementsEqual(stream.prefix(consumed)), "framing again changed bytes")
    return 0
}

/// The frames of `stream` as the protocol defines them, and how many bytes they take.
func directReading(_ stream: [UInt8]) -> (frames: [[UInt8]], consumed: Int) {
    var frames: [[UInt8]] = []
    var position = 0
    while stream.count - position >= 2 {
        let length = Int(stream[position]) << 8 | Int(stream[position + 1])
        guard stream.count - position - 2 >= length else { break }
        frames.append(Array(stream[(position + 2)..<(position + 2 + length)]))
        position += 2 + length
    }
    return (frames, position)
}
