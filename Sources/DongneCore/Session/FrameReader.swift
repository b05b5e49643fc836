/// Cuts a TCP byte stream into frames: each frame is a 2-byte big-endian length, then that many bytes (one
/// Noise message, at most 65,535 bytes, so the length field cannot claim more than the limit).
public struct FrameReader: Sendable {
    /// The largest frame body: Noise's message limit.
    public static let maximumFrameBytes = 65_535

    private var buffer: [UInt8] = []
    private var start = 0

    /// An empty reader.
    public init() {}

    /// Bytes received and not yet part of a whole frame.
    public var bufferedCount: Int { buffer.count - start }

    /// Takes newly received bytes; returns every frame they complete, in order.
    public mutating func append(_ bytes: [UInt8]) -> [[UInt8]] {
        buffer += bytes
        var frames: [[UInt8]] = []
        while buffer.count - start >= 2 {
            let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
            guard buffer.count - start - 2 >= length else { break }
            frames.append(Array(buffer[(start + 2)..<(start + 2 + length)]))
            start += 2 + length
        }
        if start > 4_096 || start == buffer.count {  // drop consumed bytes now and then, not on every frame
            buffer.removeFirst(start)
            start = 0
        }
        return frames
    }

    /// `body` as a frame.
    public static func frame(_ body: [UInt8]) -> [UInt8] {
        precondition(body.count <= maximumFrameBytes, "a frame body is at most 65,535 bytes")
        return [UInt8(body.count >> 8), UInt8(body.count & 0xff)] + body
    }
}
