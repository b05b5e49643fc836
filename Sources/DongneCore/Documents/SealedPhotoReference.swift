/// The ciphertext of a direct message's photo, as its envelope names it: the hash of its sealed manifest and its
/// size, which the stamp the envelope needs grows with (``DirectSpace/envelopeStampStrength(required:photoSize:)``).
public struct SealedPhotoReference: Hashable, Sendable {
    /// The sealed manifest's hash.
    public var hash: BlobHash
    /// The sealed blob's size in bytes: 1 to ``BlobLimits/maximumSealedPhotoBytes``.
    public var size: Int

    /// A reference.
    public init(hash: BlobHash, size: Int) {
        self.hash = hash
        self.size = size
    }
}
