/// Bytes of a line-based protocol split into lines as they arrive (gpsd's JSON reports, the local API's requests):
/// complete lines come out without their `\n`; the unfinished rest waits for the next bytes.
public struct LineBuffer: Sendable {
    /// The bytes of the line not finished yet.
    public private(set) var partial: [UInt8] = []

    /// An empty buffer.
    public init() {}

    /// Takes `bytes`; the lines they finish.
    public mutating func lines(adding bytes: [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for byte in bytes {
            if byte == 0x0A {
                lines.append(partial)
                partial.removeAll(keepingCapacity: true)
            } else {
                partial.append(byte)
            }
        }
        return lines
    }
}
