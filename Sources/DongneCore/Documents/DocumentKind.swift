/// What a document is. The number is the value of the `kind` field on the wire.
///
/// Kinds this version does not know decode as ``unknown(_:)``: they are stored and relayed, never shown.
public enum DocumentKind: Hashable, Sendable, CustomStringConvertible {
    /// A channel's name and description (kind 1).
    case channel
    /// A message in a channel: text, photo or location (kind 2).
    case message
    /// A report against a message (kind 3).
    case report
    /// The author's withdrawal of its own message (kind 4).
    case retract
    /// An author's display name and avatar (kind 5).
    case profile
    /// A 1:1 message, signed by its sender and naming its recipient (kind 6). It travels only inside a
    /// ``sealed`` envelope.
    case direct
    /// The read flag of direct messages, signed by their reader (kind 7). It travels only inside a ``sealed``
    /// envelope.
    case receipt
    /// An envelope of the direct-message space: a `direct` or `receipt` sealed to its recipient, signed by a
    /// one-time key (kind 8).
    case sealed
    /// Any other kind number.
    case unknown(UInt64)

    /// The kind with this wire number.
    public init(number: UInt64) {
        switch number {
        case 1: self = .channel
        case 2: self = .message
        case 3: self = .report
        case 4: self = .retract
        case 5: self = .profile
        case 6: self = .direct
        case 7: self = .receipt
        case 8: self = .sealed
        default: self = .unknown(number)
        }
    }

    /// The wire number of this kind.
    public var number: UInt64 {
        switch self {
        case .channel: 1
        case .message: 2
        case .report: 3
        case .retract: 4
        case .profile: 5
        case .direct: 6
        case .receipt: 7
        case .sealed: 8
        case .unknown(let number): number
        }
    }

    /// The kinds this version knows, in wire-number order.
    public static let known: [DocumentKind] = [
        .channel, .message, .report, .retract, .profile, .direct, .receipt, .sealed,
    ]

    /// The spec's name for the kind.
    public var description: String {
        switch self {
        case .channel: "channel"
        case .message: "message"
        case .report: "report"
        case .retract: "retract"
        case .profile: "profile"
        case .direct: "direct"
        case .receipt: "receipt"
        case .sealed: "sealed"
        case .unknown(let number): "unknown(\(number))"
        }
    }
}
