import DongneCore
public import Foundation

/// The test vector file `Protocol/vectors/blobs.json` (PROTOCOL.md part 3): a blob cut into chunks, their names,
/// its manifest's bytes and hash, and manifests that each break one rule.
public enum BlobVectors {
    /// The file's relative path inside the package.
    public static let relativePath = "Protocol/vectors/blobs.json"

    /// The blob: 100,000 bytes, byte i being (31 × i + 7) mod 256 — three chunks, the last shorter.
    static let blob = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    /// Its thumbnail: the four bytes of an empty JPEG's start and end markers.
    static let thumbnail: [UInt8] = [0xFF, 0xD8, 0xFF, 0xD9]

    /// The blob's photo sealed for a direct message (PROTOCOL.md §1.8, *Photos*) under the vectors' photo key:
    /// its sealed manifest and chunks.
    static func sealedPhoto() throws -> (manifest: BlobManifest, chunks: [[UInt8]]) {
        try SealedPhoto.seal(blob, manifest: try plainManifest(), key: VectorKeys.photoKey)
    }

    static func plainManifest() throws -> BlobManifest {
        let chunks = (0..<BlobChunk.count(forSize: blob.count)).map {
            BlobChunk.name(of: Array(blob[BlobChunk.range($0, inBlobOf: blob.count)]))
        }
        return try BlobManifest(
            mediaType: "image/jpeg", size: blob.count, chunks: chunks, width: 4_032, height: 3_024,
            thumbnail: thumbnail)
    }

    /// The whole file.
    public static func render() throws -> Data {
        try JSONValue.render(JSONValue.object(try contents()))
    }

    static func contents() throws -> [String: JSONValue] {
        let manifest = try plainManifest()
        let chunks = manifest.chunks
        let sealed = try sealedPhoto()
        return [
            "about": .string(
                "dongne blob vectors (Protocol/PROTOCOL.md part 3). Byte strings are lowercase hex. The blob's byte i "
                    + "is (31 * i + 7) mod 256, for i from 0 to 99,999. Regenerate with: swift run dongne-vectors"),
            "prefixes": .object([
                "chunk": .string(Hex.encode(BlobChunk.prefix)), "manifest": .string(Hex.encode(BlobManifest.prefix)),
            ]),
            "chunkBytes": .integer(UInt64(BlobLimits.chunkBytes)),
            "blob": .object([
                "size": .integer(UInt64(blob.count)),
                "chunks": .array(chunks.map { .string(Hex.encode($0.bytes)) }),
                "manifest": .object([
                    "mediaType": .string(manifest.mediaType), "width": .integer(UInt64(manifest.width)),
                    "height": .integer(UInt64(manifest.height)), "thumbnail": .string(Hex.encode(thumbnail)),
                    "bytes": .string(Hex.encode(manifest.bytes)), "hash": .string(Hex.encode(manifest.hash.raw.bytes)),
                ]),
            ]),
            "sealed": .object([
                "key": .string(Hex.encode(VectorKeys.photoKey)), "label": .string(Hex.encode(SealedPhoto.label)),
                "segmentBytes": .integer(UInt64(SealedPhoto.segmentBytes)),
                "chunks": .array(sealed.manifest.chunks.map { .string(Hex.encode($0.bytes)) }),
                "firstChunkStart": .string(Hex.encode(Array(sealed.chunks[0].prefix(64)))),
                "manifest": .object([
                    "bytes": .string(Hex.encode(sealed.manifest.bytes)),
                    "hash": .string(Hex.encode(sealed.manifest.hash.raw.bytes)),
                ]),
            ]),
            "invalid": .array(invalid(manifest).map { name, rule, bytes in
                .object(["name": .string(name), "rule": .string(rule), "bytes": .string(Hex.encode(bytes))])
            }),
            "messages": .array(messages(manifest).map { name, message in
                .object(["name": .string(name), "bytes": .string(Hex.encode(message.wireBytes))])
            }),
        ]
    }

    /// The gossip messages of §3.4 about this blob, as a node sends them.
    static func messages(_ manifest: BlobManifest) -> [(String, GossipMessage)] {
        let hash = manifest.hash
        let firstChunk = Array(blob[BlobChunk.range(2, inBlobOf: blob.count)])
        return [
            ("blob-want", .blobWant(hash)),
            ("blob-have-all", .blobHave(hash, manifest: manifest.bytes, held: HeldChunks.all(3).bytes)),
            ("blob-have-first-and-last", .blobHave(hash, manifest: manifest.bytes, held: HeldChunks(count: 3, indexes: [0, 2]).bytes)),
            ("blob-have-nothing", .blobHave(hash, manifest: [], held: [])),
            ("chunk-request", .chunkRequest(hash, indexes: [2, 0])),
            ("chunk-last", .chunk(hash, index: 2, bytes: firstChunk)),
        ]
    }

    /// Manifests that each break one rule: the valid one's map with one entry changed.
    static func invalid(_ manifest: BlobManifest) -> [(String, String, [UInt8])] {
        guard case .map(let entries)? = try? CBORDecoder.decode(manifest.bytes) else { return [] }
        func with(_ key: UInt64, _ value: CBOR?) -> [UInt8] {
            var changed = entries.filter { $0.key != .unsigned(key) }
            if let value { changed.append(CBORMapEntry(.unsigned(key), value)) }
            changed.sort { CBOREncoder.encode($0.key).lexicographicallyPrecedes(CBOREncoder.encode($1.key)) }
            return CBOREncoder.encode(.map(changed))
        }
        let twoChunks: CBOR = .array(manifest.chunks.prefix(2).map { .bytes($0.bytes) })
        return [
            ("version-2", "unsupported-version", with(0, .unsigned(2))),
            ("media-type-html", "unsupported-media-type", with(1, .text("text/html"))),
            ("size-zero", "blob-size-out-of-range", with(2, .unsigned(0))),
            ("chunk-size-65536", "chunk-size-mismatch", with(3, .unsigned(65_536))),
            ("two-chunk-names-for-three", "chunk-count-mismatch", with(4, twoChunks)),
            ("width-zero", "dimension-out-of-range", with(5, .unsigned(0))),
            ("thumbnail-empty", "thumbnail-size-out-of-range", with(7, .bytes([]))),
            ("without-height", "missing-field", with(6, nil)),
            ("extra-key-8", "unexpected-field", with(8, .unsigned(1))),
            ("sealed-with-image-fields", "unexpected-field", with(1, .text(BlobLimits.sealedMediaType))),
        ]
    }
}
