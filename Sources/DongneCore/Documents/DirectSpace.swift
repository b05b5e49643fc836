/// The direct-message space (PROTOCOL.md §1.8): the one place every node carries `sealed` envelopes for
/// everyone, reconciled and gossiped like a channel, each envelope kept for ``retention``.
///
/// A relay learns from an envelope only that it exists, its hour and its size bucket: not who sent it, not whom
/// it is for, not whether two envelopes belong to one conversation.
public enum DirectSpace {
    /// Domain-separation prefix of the space's id: ASCII `dongne.direct.space.v1` and a zero byte. Channel ids
    /// hash names under another prefix, so no channel name reaches this id.
    public static let idPrefix: [UInt8] = Array("dongne.direct.space.v1".utf8) + [0]
    /// The space's id: the `channel` field of every `sealed` envelope.
    public static let id = ChannelID(Sodium.blake2b256(prefix: idPrefix, bytes: []))

    /// How long an envelope is kept and relayed after its `created` hour: 30 days. Older ones are not taken,
    /// and each node deletes its own by the same rule, so no tombstone is needed.
    public static let retention: UInt64 = 30 * 24 * hour
    /// An envelope's `created` is a whole number of hours since the epoch: every envelope of an hour shares it,
    /// so a node that was away learns nothing finer, and the real time travels only inside.
    public static let hour: UInt64 = 3_600_000

    /// The sizes a sealed inner document is padded to (ISO/IEC 7816-4, `sodium_pad`): three sizes on the wire.
    /// 512 bytes hold a receipt or a chat line of about a hundred Hangul syllables.
    public static let paddedSizes = [512, 2_048, 8_192]
    /// What `crypto_box_seal` adds: the ephemeral public key and the MAC.
    public static let sealOverhead = 48
    /// What the conversation key hashes, keyed with the pair's `crypto_box_beforenm`: ASCII
    /// `dongne.direct.auth.v1` and a zero byte.
    public static let authenticatorLabel = Array("dongne.direct.auth.v1".utf8) + [0]
    /// The authenticator in front of the inner document: HMAC-SHA-512-256 under the conversation key.
    public static let authenticatorBytes = 32
    /// The largest inner document: its authenticator and one byte of padding must fit in the largest size.
    public static let maximumInnerBytes = 8_192 - authenticatorBytes - 1
    /// The only sizes a `box` may have.
    public static let boxSizes = paddedSizes.map { $0 + sealOverhead }

    /// Bits of stamp strength an envelope's one-time key may have below the network's required identity
    /// strength: 2^(24 − 6) hashes, about 60 ms of one core on the default network, for each envelope. A one-time
    /// key signs one envelope: a second by the same key is declined, whatever its stamp (the store's admission).
    public static let stampStrengthDiscount = 6
    /// Most document ids one receipt names.
    public static let maximumReceiptIDs = 64
    /// Most bytes of envelopes a node keeps: at the cap it takes no new envelope until old ones expire.
    public static let maximumStoredBytes = 256 << 20

    /// The stamp strength an envelope's one-time key must show on a network that asks `required` of identities.
    public static func envelopeStampStrength(required: Int) -> Int { max(0, required - stampStrengthDiscount) }

    /// The bytes of envelope one bit of stamp strength pays for beyond the envelope strength: an envelope naming a
    /// photo of `n` bytes needs ⌈log2 ⌈n / 8,192⌉⌉ more bits, so that each byte of a photo costs its sender at least
    /// the work a byte of the largest text envelope does, and a flood of photos fills the space's cap no cheaper.
    public static let photoBytesPerStampDoubling = 8_192

    /// The stamp strength an envelope's one-time key must show when the envelope names a photo of `photoSize`
    /// bytes (nil: none).
    public static func envelopeStampStrength(required: Int, photoSize: Int?) -> Int {
        envelopeStampStrength(required: required) + photoStampBits(photoSize: photoSize)
    }

    /// The bits a photo of `photoSize` bytes adds to the envelope strength: ⌈log2 ⌈size / 8,192⌉⌉.
    public static func photoStampBits(photoSize: Int?) -> Int {
        guard let photoSize, photoSize > photoBytesPerStampDoubling else { return 0 }
        let units = (photoSize + photoBytesPerStampDoubling - 1) / photoBytesPerStampDoubling
        return Int.bitWidth - (units - 1).leadingZeroBitCount
    }

    /// The bytes an envelope of `envelopeBytes` takes of the space's cap: its own and its photo's ciphertext.
    public static func storedBytes(envelopeBytes: Int, photo: SealedPhotoReference?) -> Int {
        envelopeBytes + (photo?.size ?? 0)
    }

    /// The stamp rule of the space on a network whose identities follow `policy` (its quota, one envelope per
    /// key, is the store's to apply).
    public static func admission(for policy: AdmissionPolicy) -> AdmissionPolicy {
        AdmissionPolicy(
            requiredStampStrength: envelopeStampStrength(required: policy.requiredStampStrength),
            authorQuotaBytes: DocumentLimits.maximumDocumentBytes)
    }

    /// The `created` of an envelope sealed at `now`: the start of its hour.
    public static func envelopeCreated(at now: UInt64) -> UInt64 { now - now % hour }

    /// Whether an envelope created at `created` has passed its retention at `now`.
    public static func hasExpired(created: UInt64, at now: UInt64) -> Bool {
        now >= retention && created < now - retention
    }
}
