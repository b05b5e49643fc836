/// Every bound on a document, by name. `Protocol/PROTOCOL.md` lists the same numbers; a test keeps them equal.
public enum DocumentLimits {
    /// The protocol version this code writes and accepts in the `version` field.
    public static let protocolVersion: UInt64 = 1
    /// Largest signed document, in bytes. Checked before any decoding.
    public static let maximumDocumentBytes = 16_384
    /// Largest message text, in UTF-8 bytes.
    public static let maximumTextBytes = 4_000
    /// Largest display name, sender name or channel name, in UTF-8 bytes.
    public static let maximumNameBytes = 64
    /// Largest channel description or report reason, in UTF-8 bytes.
    public static let maximumNoteBytes = 500
    /// How far ahead of a node's own clock a received document may be dated, in milliseconds: one dated later is
    /// not accepted yet (not stored, shown or relayed, and not held against its sender), so that no one can pin a
    /// message to the end of every history. Clocks of honest machines agree far more closely than this.
    public static let maximumClockSkew: UInt64 = 600_000
    /// Latest `created` time accepted: 2^53 − 1 milliseconds, the largest integer every JSON reader keeps exactly.
    public static let maximumCreated: UInt64 = (1 << 53) - 1
}
