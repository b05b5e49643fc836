/// Bytes of a line-based protocol split into lines as they arrive (gpsd's JSON reports, the local API's requests):
/// complete lines come out without their `\n`; the unfinished rest waits for the next bytes.
public struct LineBuffer: Sendable {
    /// The bytes of the line not finished yet.
    public private(set) var partial: [UInt8] = []

    /// An empty buffer.
    public init() {}

    /// Takes `bytes`; the lines they finish.
    public mutating func lines(adding bytes: [UInt8]) -> [[UInt8]] {
        // The common case, one whole line and nothing waiting: no bytes copied on the way.
        if partial.isEmpty, let newline = bytes.firstIndex(of: 0x0A), newline == bytes.count - 1 {
            return [Array(bytes[..<newline])]
        }
        var lines: [[UInt8]] = []
        var rest = bytes[...]
        while let newline = rest.firstIndex(of: 0x0A) {
            partial += rest[..<newline]
            lines.append(partial)
            partial = []
            rest = rest[(newline + 1)...]
        }
        partial += rest
        return lines
    }
}
