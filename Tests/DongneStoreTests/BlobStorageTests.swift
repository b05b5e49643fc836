import DongneCore
import DongneStore
import Foundation
import Testing

/// Photos in the store (`BlobStorage`, `BlobDatabase`): a file in and out a chunk at a time, what a fetch resumes
/// from, and the budget for other people's photos.
@Suite struct BlobStorageTests {
    /// A blob of `chunks` chunks of bytes from `seed`, and its manifest.
    static func blob(_ seed: UInt64, chunks: Int) throws -> (manifest: BlobManifest, chunks: [[UInt8]]) {
        var generator = SplitMix64(seed: seed)
        let parts = (0..<chunks).map { _ in
            (0..<BlobLimits.chunkBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        let manifest = try BlobManifest(
            mediaType: "image/png", size: chunks * BlobLimits.chunkBytes, chunks: parts.map(BlobChunk.name(of:)),
            width: 2, height: 2, thumbnail: [1])
        return (manifest, parts)
    }

    static func fetched(_ blob: (manifest: BlobManifest, chunks: [[UInt8]]), at time: UInt64, into store: Store)
        async throws
    {
        try await done { store.submitBlobManifest(blob.manifest, at: time, completion: $0) }
        for (index, chunk) in blob.chunks.enumerated() {
            try await done { store.submitBlobChunk(blob.manifest.hash, index: index, bytes: chunk, completion: $0) }
        }
    }

    static func done(_ submit: (@escaping @Sendable (Result<Void, StoreError>) -> Void) -> Void) async throws {
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    @Test func aFileGoesInAndComesOutByteForByteInItsOwnFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"))
        defer { store.close() }
        var generator = SplitMix64(seed: 3)
        let bytes = (0..<(2 * BlobLimits.chunkBytes + 1_000)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("in.png")))
        let manifest = try await store.importBlob(
            file: directory.file("in.png"), mediaType: "image/png", width: 3, height: 4, thumbnail: [9], at: 1)
        #expect(manifest.size == bytes.count && manifest.chunks.count == 3)
        #expect(try store.blobManifest(manifest.hash) == manifest)
        #expect(try store.storedChunks(of: manifest.hash) == [0, 1, 2])
        try store.writeBlob(manifest.hash, to: directory.file("out.png"))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("out.png")))) == bytes)
        #expect(FileManager.default.fileExists(atPath: directory.file("dongne-blobs.sqlite")), "photos apart")
        #expect(try store.blobUsage() == (own: bytes.count, others: 0))
    }

    @Test func aFetchStoppedHalfWayIsListedWithTheChunksItHas() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"))
        defer { store.close() }
        let blob = try Self.blob(1, chunks: 4)
        try await Self.done { store.submitBlobManifest(blob.manifest, at: 1, completion: $0) }
        for index in [0, 2] {
            try await Self.done {
                store.submitBlobChunk(blob.manifest.hash, index: index, bytes: blob.chunks[index], completion: $0)
            }
        }
        #expect(try store.incompleteBlobs() == [blob.manifest.hash])
        #expect(try store.storedChunks(of: blob.manifest.hash) == [0, 2])
        #expect(throws: StoreError.self, "a blob with chunks missing is not written out") {
            try store.writeBlob(blob.manifest.hash, to: directory.file("out"))
        }
    }

    @Test func otherPeoplesPhotosOverTheBudgetGoLeastRecentlyUsedFirstNeverOwnOrKept() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"))
        defer { store.close() }
        let (a, b, c) = (try Self.blob(1, chunks: 2), try Self.blob(2, chunks: 2), try Self.blob(3, chunks: 2))
        try await Self.fetched(a, at: 1, into: store)
        try await Self.fetched(b, at: 2, into: store)
        try await Self.fetched(c, at: 3, into: store)
        var generator = SplitMix64(seed: 9)
        let own = (0..<(5 * BlobLimits.chunkBytes)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(own).write(to: URL(fileURLWithPath: directory.file("own.png")))
        let mine = try await store.importBlob(
            file: directory.file("own.png"), mediaType: "image/png", width: 1, height: 1, thumbnail: [1], at: 0)
        let each = 2 * BlobLimits.chunkBytes
        #expect(try await store.evictBlobs(over: 3 * each, keeping: []) == [], "within the budget")
        let evicted = try await store.evictBlobs(over: each, keeping: [a.manifest.hash])
        #expect(evicted == [b.manifest.hash, c.manifest.hash], "the oldest, a, is in view: b and c go")
        #expect(try store.blobManifest(a.manifest.hash) != nil && store.blobManifest(mine.hash) != nil)
        #expect(try store.storedChunks(of: b.manifest.hash).isEmpty)
        #expect(try store.blobUsage() == (own: own.count, others: each))
    }
}
