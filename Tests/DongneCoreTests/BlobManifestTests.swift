import DongneCore
import Testing

/// Blob manifests and chunk names (PROTOCOL.md part 3): content-addressed, canonical, and checked against every
/// bound before anything is fetched.
@Suite struct BlobManifestTests {
    static let photo = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    static let chunks = (0..<BlobChunk.count(forSize: photo.count)).map {
        BlobChunk.name(of: Array(photo[BlobChunk.range($0, inBlobOf: photo.count)]))
    }

    static func manifest(size: Int = photo.count, chunks: [Bytes32] = chunks) throws(BlobError) -> BlobManifest {
        try BlobManifest(
            mediaType: "image/jpeg", size: size, chunks: chunks, width: 4_032, height: 3_024,
            thumbnail: [0xFF, 0xD8, 0xFF, 0xD9])
    }

    @Test func aBlobIsCutIntoFixedChunksTheLastShorterEachNamedByItsHash() {
        #expect(Self.chunks.count == 3, "100,000 bytes in chunks of 49,152")
        #expect(BlobChunk.range(2, inBlobOf: Self.photo.count) == 98_304..<100_000)
        #expect(Self.chunks[0] == BLAKE2b.hash256(Array(Self.photo[0..<49_152]), prefix: Array("dongne.blob.chunk.v1".utf8) + [0]))
        #expect(BlobChunk.count(forSize: BlobLimits.maximumBlobBytes) == BlobLimits.maximumChunks)
    }

    @Test func aManifestReadsBackFromItsBytesAndItsHashIsOfThoseBytes() throws {
        let manifest = try Self.manifest()
        let read = try BlobManifest(parsing: manifest.bytes)
        #expect(read == manifest)
        #expect(read.hash == BlobHash(BLAKE2b.hash256(manifest.bytes, prefix: BlobManifest.prefix)))
        #expect(read.chunks == Self.chunks && read.width == 4_032 && read.height == 3_024)
        let largest = try BlobManifest(
            mediaType: "image/png", size: BlobLimits.maximumBlobBytes,
            chunks: Array(repeating: Self.chunks[0], count: BlobLimits.maximumChunks), width: 1, height: 1,
            thumbnail: [UInt8](repeating: 1, count: BlobLimits.maximumThumbnailBytes))
        #expect(largest.bytes.count <= BlobLimits.maximumManifestBytes, "the largest manifest fits its bound")
    }

    @Test func everyBoundIsCheckedAndNamesItsRule() throws {
        func rule(_ make: () throws -> BlobManifest) -> String? {
            do { _ = try make() } catch { return (error as? BlobError)?.rule ?? "\(error)" }
            return nil
        }
        #expect(rule { try Self.manifest(chunks: Array(Self.chunks.prefix(2))) } == "chunk-count-mismatch")
        #expect(rule { try Self.manifest(size: 0, chunks: []) } == "blob-size-out-of-range")
        #expect(rule { try Self.manifest(size: BlobLimits.maximumBlobBytes + 1) } == "blob-size-out-of-range")
        #expect(rule {
            try BlobManifest(mediaType: "text/html", size: 1, chunks: [Self.chunks[0]], width: 1, height: 1, thumbnail: [1])
        } == "unsupported-media-type")
        #expect(rule {
            try BlobManifest(mediaType: "image/png", size: 1, chunks: [Self.chunks[0]], width: 0, height: 1, thumbnail: [1])
        } == "dimension-out-of-range")
        #expect(rule {
            try BlobManifest(mediaType: "image/png", size: 1, chunks: [Self.chunks[0]], width: 1, height: 1, thumbnail: [])
        } == "thumbnail-size-out-of-range")
        let good = try Self.manifest().bytes
        #expect(rule { try BlobManifest(parsing: good + [0]) } == "cbor-trailing-bytes")
        #expect(rule { try BlobManifest(parsing: [UInt8](repeating: 0x40, count: BlobLimits.maximumManifestBytes + 1)) }
            == "manifest-too-large")
        // Key 3, the chunk size, written as 65,536 (0x1a 00010000) where 49,152 (0x19 c000) was.
        let otherChunkSize = Array(good.replacing([0x03, 0x19, 0xC0, 0x00], with: [0x03, 0x1A, 0x00, 0x01, 0x00, 0x00]))
        #expect(rule { try BlobManifest(parsing: otherChunkSize) } == "chunk-size-mismatch")
    }
}
