/// A direct message's photo, encrypted so that the nodes that carry it store and serve only ciphertext
/// (PROTOCOL.md §1.8, *Photos*).
///
/// The sender prepares the photo as any other (a manifest and its bytes, part 3), then seals the **plain stream**
/// — the manifest's length (4 bytes, big-endian), the manifest, the photo's bytes — under a random 32-byte key:
/// cut into segments of ``segmentBytes``, each encrypted with XChaCha20-Poly1305 (IETF) under the key, with the
/// segment's index as nonce and ``label`` as associated data. Each encrypted segment is one chunk of an ordinary
/// blob whose manifest is sealed (``BlobManifest/isSealed``: a size and chunk names, nothing of the image). The
/// inner `direct` document names that manifest's hash and carries the key, so only the recipient can read the
/// photo, and its signature fixes every byte of it.
public enum SealedPhoto {
    /// Associated data of every segment: ASCII `dongne.blob.sealed.v1` and a zero byte.
    public static let label: [UInt8] = Array("dongne.blob.sealed.v1".utf8) + [0]
    /// Plain bytes per segment: a chunk less the Poly1305 tag, so each encrypted segment fills one chunk.
    public static let segmentBytes = BlobLimits.chunkBytes - tagBytes
    /// What XChaCha20-Poly1305 adds to a segment.
    public static let tagBytes = 16
    /// The key's length.
    public static let keyBytes = 32

    /// A new random key for one photo. A key seals one photo only: the nonces are the segments' indexes.
    public static func newKey() -> [UInt8] { Sodium.randomBytes(keyBytes) }

    /// The sealed bytes of the photo `bytes` described by `manifest` (a plain manifest, at most
    /// ``BlobLimits/maximumDirectPhotoBytes``), under `key`, and the sealed manifest that names them.
    public static func seal(_ bytes: [UInt8], manifest: BlobManifest, key: [UInt8]) throws(BlobError)
        -> (manifest: BlobManifest, chunks: [[UInt8]])
    {
        guard !manifest.isSealed, bytes.count == manifest.size, bytes.count <= BlobLimits.maximumDirectPhotoBytes
        else { throw .sizeOutOfRange(bytes.count) }
        let stream = bigEndian32(manifest.bytes.count) + manifest.bytes + bytes
        var chunks: [[UInt8]] = []
        chunks.reserveCapacity(stream.count / segmentBytes + 1)
        for (index, start) in stride(from: 0, to: stream.count, by: segmentBytes).enumerated() {
            let segment = stream[start..<min(stream.count, start + segmentBytes)]
            chunks.append(
                Sodium.xchachaPolyEncrypt(key: key, nonce: nonce(index), associatedData: label, plaintext: segment))
        }
        let sealed = try BlobManifest(
            sealedSize: chunks.reduce(0) { $0 + $1.count }, chunks: chunks.map(BlobChunk.name(of:)))
        return (sealed, chunks)
    }

    /// The photo inside the sealed chunks (in order) under `key`: its plain manifest and bytes, every chunk name
    /// checked. Nil when a segment does not decrypt or what it holds breaks a rule: the sender's mistake or
    /// forgery, and the message's photo is unreadable.
    public static func open(_ chunks: [[UInt8]], key: [UInt8]) -> (manifest: BlobManifest, bytes: [UInt8])? {
        guard key.count == keyBytes else { return nil }
        var stream: [UInt8] = []
        stream.reserveCapacity(chunks.count * segmentBytes)
        for (index, chunk) in chunks.enumerated() {
            guard
                let segment = Sodium.xchachaPolyDecrypt(
                    key: key, nonce: nonce(index), associatedData: label, ciphertext: chunk)
            else { return nil }
            stream += segment
        }
        guard stream.count >= 4 else { return nil }
        let length = stream[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard length <= BlobLimits.maximumManifestBytes, stream.count >= 4 + length,
            let manifest = try? BlobManifest(parsing: Array(stream[4..<(4 + length)])), !manifest.isSealed
        else { return nil }
        let bytes = Array(stream[(4 + length)...])
        guard bytes.count == manifest.size, bytes.count <= BlobLimits.maximumDirectPhotoBytes else { return nil }
        for (index, name) in manifest.chunks.enumerated() {
            let range = BlobChunk.range(index, inBlobOf: bytes.count)
            guard BlobChunk.name(of: Array(bytes[range])) == name else { return nil }
        }
        return (manifest, bytes)
    }

    /// The sealed size of a photo whose plain stream has `streamBytes` bytes.
    public static func sealedSize(ofStream streamBytes: Int) -> Int {
        streamBytes + tagBytes * ((streamBytes + segmentBytes - 1) / segmentBytes)
    }

    /// The nonce of segment `index`: the index as 8 bytes, little-endian, then 16 zero bytes.
    static func nonce(_ index: Int) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: UInt64(index) >> (8 * UInt64($0))) } + [UInt8](repeating: 0, count: 16)
    }

    private static func bigEndian32(_ value: Int) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }
}
