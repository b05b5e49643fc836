/// The body of a `direct` document: a 1:1 message, signed by its sender's identity and naming its recipient.
///
/// A `direct` document never travels on its own: it is padded and sealed to its recipient in a ``SealedEnvelope``,
/// so that only the recipient learns who wrote it, to whom, and what it says. Because the signed bytes name the
/// recipient, a recipient cannot re-seal the message to someone else as if it had been sent to them.
public struct DirectMessage: Hashable, Sendable {
    /// Who the message is for.
    public var recipient: PublicKey
    /// What it holds: text, a location, or a photo whose chunks are encrypted under ``photoKey``.
    public var content: MessageContent
    /// The key the photo's manifest and chunks are encrypted with; present exactly when the content is a photo.
    public var photoKey: [UInt8]?

    /// A direct body.
    public init(recipient: PublicKey, content: MessageContent, photoKey: [UInt8]? = nil) {
        self.recipient = recipient
        self.content = content
        self.photoKey = photoKey
    }
}

/// The body of a `receipt` document: its author (the reader) has seen these direct messages of `recipient`.
public struct Receipt: Hashable, Sendable {
    /// The author of the messages read, to whom the receipt is sealed.
    public var recipient: PublicKey
    /// The ids of the `direct` documents read: 1 to ``DirectSpace/maximumReceiptIDs``.
    public var read: [DocumentID]

    /// A receipt body.
    public init(recipient: PublicKey, read: [DocumentID]) {
        self.recipient = recipient
        self.read = read
    }
}

/// The body of a `sealed` document: an envelope of the direct-message space (``DirectSpace``).
public struct SealedBox: Hashable, Sendable {
    /// `crypto_box_seal` of the padded inner document, to the recipient's X25519 key: one of
    /// ``DirectSpace/boxSizes`` bytes.
    public var box: [UInt8]
    /// The sealed photo the inner message carries, if any: named in clear so that every node that carries the
    /// envelope fetches and keeps its ciphertext too (PROTOCOL.md §1.8, *Photos*).
    public var photo: SealedPhotoReference?

    /// An envelope body.
    public init(box: [UInt8], photo: SealedPhotoReference? = nil) {
        self.box = box
        self.photo = photo
    }
}
