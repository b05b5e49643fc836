import Foundation  // Unicode NFC normalisation only; DongneCore uses nothing else from Foundation.

/// A channel's name in its normal form, and the channel id derived from it.
///
/// The normal form is Unicode NFC with surrounding white space removed, so "서울특별시" typed on any keyboard
/// (precomposed syllables or conjoining jamo) names the same channel. The id is
/// BLAKE2b-256(`"dongne.channel.id.v1" 0x00` ‖ UTF-8 of the normal form).
public struct ChannelName: Hashable, Sendable, CustomStringConvertible {
    /// The normalised name.
    public let value: String
    /// The id every node derives from this name.
    public let id: ChannelID

    /// Domain-separation prefix of the channel id.
    public static let idPrefix: [UInt8] = Array("dongne.channel.id.v1".utf8) + [0]

    /// Normalises `name` (NFC, surrounding white space trimmed) and checks it is a usable channel name.
    public init(normalizing name: String) throws(DocumentError) {
        try self.init(normalized: Self.normalize(name))
    }

    /// Accepts `name` only if it is already in normal form: what a decoder requires of a channel document.
    public init(exactly name: String) throws(DocumentError) {
        guard Self.normalize(name).utf8.elementsEqual(name.utf8) else { throw .channelNameNotNormalized }
        try self.init(normalized: name)
    }

    private init(normalized: String) throws(DocumentError) {
        try TextRules.check(normalized, field: "name", limit: DocumentLimits.maximumNameBytes)
        value = normalized
        id = ChannelID(Sodium.blake2b256(prefix: Self.idPrefix, bytes: Array(normalized.utf8)))
    }

    /// The normalised name.
    public var description: String { value }

    /// Unicode NFC of `text`, nothing trimmed.
    static func nfc(_ text: String) -> String { text.precomposedStringWithCanonicalMapping }

    private static func normalize(_ name: String) -> String {
        name.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
