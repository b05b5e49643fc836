import DongneRegions

/// Where the node is at one moment, and what follows from it: the place, the neighbourhood channels, and where
/// the user may post.
public struct WhereaboutsSnapshot: Sendable, Equatable {
    /// The position in use, if any (see ``Whereabouts`` for which one wins).
    public let position: Whereabouts.Position?
    /// What the GPS is doing.
    public let gps: Whereabouts.GPSStatus
    /// The position the user set, even while a GPS fix is used instead.
    public let userSet: Whereabouts.Position?
    /// The 시·도, 시·군·구 and 읍·면·동 of the position; nil without a position, or outside Korea's borders.
    public let place: Place?
    /// Why no place can be named even with a position, when the borders file could not be read.
    public let bordersUnavailable: String?
    /// The channels for where the node is, widest first (empty without a position).
    public let neighbourhoods: [Neighbourhood]
    /// The rule the user posts under.
    public let postingRule: PostingRule
    /// When this was taken, in milliseconds since the epoch.
    public let at: UInt64

    /// The channels named after places that the user may post in; nil when the rule refuses none (it is
    /// ``PostingRule/anywhere``, or no position is known). Channels named after topics are always open.
    public var mayPostIn: [String]? {
        guard postingRule == .ownNeighbourhood, position != nil else { return nil }
        return neighbourhoods.map(\.channel)
    }

    /// The place in words, narrowest level last ("서울특별시 종로구 사직동"); nil outside Korea.
    public var placeName: String? {
        neighbourhoods.last { if case .geohash = $0.level { false } else { true } }?.channel
    }

    /// How old the position is, in milliseconds.
    public var positionAge: UInt64? { position.map { at >= $0.since ? at - $0.since : 0 } }
}
