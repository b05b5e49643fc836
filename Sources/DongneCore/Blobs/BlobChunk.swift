/// How a blob is cut into chunks and how each chunk is named (PROTOCOL.md part 3): fixed-size pieces of
/// ``BlobLimits/chunkBytes`` (the last may be shorter), each named by BLAKE2b-256(``prefix`` ‖ its bytes), so that
/// a receiver checks every chunk on its own the moment it arrives, whoever sent it.
public enum BlobChunk {
    /// Domain-separation prefix of a chunk's name: ASCII `dongne.blob.chunk.v1` and a zero byte.
    public static let prefix: [UInt8] = Array("dongne.blob.chunk.v1".utf8) + [0]

    /// The name of a chunk with these bytes.
    public static func name(of chunk: [UInt8]) -> Bytes32 { BLAKE2b.hash256(chunk, prefix: prefix) }

    /// How many chunks a blob of `size` bytes has.
    public static func count(forSize size: Int) -> Int {
        (max(0, size) + BlobLimits.chunkBytes - 1) / BlobLimits.chunkBytes
    }

    /// The byte range of chunk `index` in a blob of `size` bytes.
    public static func range(_ index: Int, inBlobOf size: Int) -> Range<Int> {
        let start = index * BlobLimits.chunkBytes
        return start..<min(size, start + BlobLimits.chunkBytes)
    }
}
