import DongneCore
import Testing

/// A direct message's photo sealed under its key (PROTOCOL.md §1.8, *Photos*): ciphertext chunks any node can
/// check by name, a manifest that says nothing of the image, and nothing readable without the key.
@Suite struct SealedPhotoTests {
    static let key = [UInt8](repeating: 0x42, count: 32)

    static func sealed() throws -> (manifest: BlobManifest, chunks: [[UInt8]]) {
        try SealedPhoto.seal(BlobManifestTests.photo, manifest: try BlobManifestTests.manifest(), key: key)
    }

    @Test func aSealedPhotoOpensUnderItsKeyToTheSameManifestAndBytes() throws {
        let (manifest, chunks) = try Self.sealed()
        let plain = try BlobManifestTests.manifest()
        let stream = 4 + plain.bytes.count + BlobManifestTests.photo.count
        #expect(manifest.isSealed && manifest.size == SealedPhoto.sealedSize(ofStream: stream))
        #expect(chunks.dropLast().allSatisfy { $0.count == BlobLimits.chunkBytes }, "each segment fills a chunk")
        #expect(manifest.chunks == chunks.map(BlobChunk.name(of:)))
        let opened = try #require(SealedPhoto.open(chunks, key: Self.key))
        #expect(opened.manifest == plain && opened.bytes == BlobManifestTests.photo)
    }

    @Test func nothingOpensUnderAnotherKeyAlteredOrReordered() throws {
        let (_, chunks) = try Self.sealed()
        #expect(SealedPhoto.open(chunks, key: [UInt8](repeating: 0x43, count: 32)) == nil, "another key")
        var altered = chunks
        altered[1][100] ^= 1
        #expect(SealedPhoto.open(altered, key: Self.key) == nil, "a flipped bit")
        #expect(SealedPhoto.open([chunks[1], chunks[0]] + chunks.dropFirst(2), key: Self.key) == nil, "reordered")
        #expect(SealedPhoto.open(Array(chunks.dropLast()), key: Self.key) == nil, "truncated")
        #expect(SealedPhoto.open(chunks, key: Array(Self.key.prefix(16))) == nil, "a short key")
    }

    @Test func aSealedManifestCarriesNoImageFieldsAndReadsBack() throws {
        let (manifest, _) = try Self.sealed()
        let read = try BlobManifest(parsing: manifest.bytes)
        #expect(read == manifest && read.isSealed && read.width == 0 && read.thumbnail.isEmpty)
        // The CBOR map has five keys (0 to 4): version, media type, size, chunk size, chunks.
        #expect(manifest.bytes.first == 0xA5)
        // The sealed media type with the image fields of a plain manifest.
        let withImageFields = CBOREncoder.encode(.map([
            CBORMapEntry(.unsigned(0), .unsigned(1)), CBORMapEntry(.unsigned(1), .text(BlobLimits.sealedMediaType)),
            CBORMapEntry(.unsigned(2), .unsigned(UInt64(manifest.size))),
            CBORMapEntry(.unsigned(3), .unsigned(UInt64(BlobLimits.chunkBytes))),
            CBORMapEntry(.unsigned(4), .array(manifest.chunks.map { .bytes($0.bytes) })),
            CBORMapEntry(.unsigned(5), .unsigned(1)),
        ]))
        #expect(throws: BlobError.field(.unexpectedField("key 5"))) { try BlobManifest(parsing: withImageFields) }
    }

    @Test func theLargestDirectPhotoSealsWithinWhatAnEnvelopeMayName() {
        let stream = 4 + BlobLimits.maximumManifestBytes + BlobLimits.maximumDirectPhotoBytes
        #expect(SealedPhoto.sealedSize(ofStream: stream) <= BlobLimits.maximumSealedPhotoBytes)
        #expect(BlobLimits.maximumSealedPhotoBytes <= BlobLimits.maximumBlobBytes)
    }

    @Test func aPhotoOverTheDirectLimitIsNotSealed() throws {
        let big = [UInt8](repeating: 1, count: BlobLimits.maximumDirectPhotoBytes + 1)
        let names = (0..<BlobChunk.count(forSize: big.count)).map {
            BlobChunk.name(of: Array(big[BlobChunk.range($0, inBlobOf: big.count)]))
        }
        let manifest = try BlobManifest(
            mediaType: "image/png", size: big.count, chunks: names, width: 1, height: 1, thumbnail: [1])
        #expect(throws: BlobError.sizeOutOfRange(big.count)) { try SealedPhoto.seal(big, manifest: manifest, key: Self.key) }
    }

    @Test func anEnvelopeNamingAPhotoAsksAStrongerStampTheLargerThePhoto() throws {
        #expect(DirectSpace.photoStampBits(photoSize: nil) == 0)
        #expect(DirectSpace.photoStampBits(photoSize: 8_192) == 0)
        #expect(DirectSpace.photoStampBits(photoSize: 8_193) == 1)
        #expect(DirectSpace.photoStampBits(photoSize: 16_384) == 1)
        #expect(DirectSpace.photoStampBits(photoSize: 16_385) == 2)
        #expect(DirectSpace.photoStampBits(photoSize: 8 << 20) == 10)
        #expect(DirectSpace.envelopeStampStrength(required: 24, photoSize: 1 << 20) == 18 + 7)
        // Work per byte never falls below the largest text envelope's: 2^bits × 8,192 ≥ size.
        for size in [1, 8_192, 8_193, 100_000, 1 << 20, BlobLimits.maximumBlobBytes] {
            #expect((1 << DirectSpace.photoStampBits(photoSize: size)) * 8_192 >= size)
        }
    }

    @Test func anEnvelopeNamesItsPhotoAndSizeBothOrNeither() throws {
        let author = SigningKey.generate()
        let recipient = SigningKey.generate().publicKey
        let inner = try Document.sign(
            .direct(DirectMessage(recipient: recipient, content: .photo(BlobHash(Bytes32([UInt8](repeating: 7, count: 32))!)),
                photoKey: Self.key)),
            created: 1_764_400_000_000, by: author)
        let photo = SealedPhotoReference(hash: BlobHash(Bytes32([UInt8](repeating: 9, count: 32))!), size: 200_000)
        let envelope = try SealedEnvelope.seal(
            inner, from: author, to: recipient, wrapper: .generate(), at: 1_764_400_000_000, photo: photo)
        let read = try Document(verifying: envelope.bytes)
        guard case .sealed(let sealed) = read.body else { throw SealedPhotoFailure() }
        #expect(sealed.photo == photo)
        #expect(throws: DocumentError.sizeOutOfRange(field: "photoSize", size: 0, range: 1...BlobLimits.maximumSealedPhotoBytes)) {
            _ = try SealedEnvelope.seal(
                inner, from: author, to: recipient, wrapper: .generate(), at: 1_764_400_000_000,
                photo: SealedPhotoReference(hash: photo.hash, size: 0))
        }
    }

    /// The recipient takes a photo only with the envelope that paid for it: a photo message in an envelope naming
    /// another photo or none, and an envelope naming a photo around a text, are refused (`photo-mismatch`).
    @Test func aPhotoComesOnlyInTheEnvelopeThatNamesIt() throws {
        let author = SigningKey.generate(), recipient = SigningKey.generate()
        let hash = BlobHash(Bytes32([UInt8](repeating: 7, count: 32))!)
        let other = BlobHash(Bytes32([UInt8](repeating: 8, count: 32))!)
        func opened(_ content: MessageContent, naming photo: BlobHash?) throws -> OpenedEnvelope {
            var photoKey: [UInt8]?
            if case .photo = content { photoKey = Self.key }
            let inner = try Document.sign(
                .direct(DirectMessage(recipient: recipient.publicKey, content: content, photoKey: photoKey)),
                created: 1_764_400_000_000, by: author)
            let envelope = try SealedEnvelope.seal(
                inner, from: author, to: recipient.publicKey, wrapper: .generate(), at: 1_764_400_000_000,
                photo: photo.map { SealedPhotoReference(hash: $0, size: 1_000) })
            guard case .sealed(let box) = envelope.body else { throw SealedPhotoFailure() }
            return DirectMessageKey(recipient).open(box)
        }
        guard case .direct = try opened(.photo(hash), naming: hash) else { throw SealedPhotoFailure() }
        #expect(try opened(.photo(hash), naming: other) == .invalid(.photoMismatch))
        #expect(try opened(.photo(hash), naming: nil) == .invalid(.photoMismatch))
        #expect(try opened(.text("x"), naming: hash) == .invalid(.photoMismatch))
    }
}

struct SealedPhotoFailure: Error {}
