/// Where the node is, and how it knows: from a GPS (through gpsd) while it has a recent fix, else where the user
/// said (`--location`, `/where LAT LON`), else nowhere.
///
/// A pure instance in the manner of the peer and gossip instances: it takes events with the time and returns
/// directives; the shell (`Dongne.NodeWhereabouts`) talks to gpsd, keeps the user's choice in the store and
/// tells listeners. The contract:
///
/// 1. A GPS fix is used while it is at most ``gpsFixMaximumAge`` old; a GPS that answers with no fix, or whose last
///    fix is older, is not used, and ``gpsStatus(at:)`` says which.
/// 2. While no fresh GPS fix is known, the position the user set is used, however old: a desk does not move.
///    Its age is still reported.
/// 3. Every change of the position used (a new fix, a fix going stale, the user's choice) yields one
///    ``Directive/positionChanged(_:)``; an event that changes nothing yields none.
/// 4. A GPS that cannot be reached is said once (``Directive/sayGPSUnavailable(reason:)``), not at every retry;
///    once it answers again (``Directive/sayGPSAnswers``), losing it is said again.
/// 5. The user's choice is to be remembered (``Directive/rememberUserLocation(_:)``) whenever it changes.
public struct Whereabouts: Sendable {
    /// How old a GPS fix may be and still be where the node is (a minute: a receiver reports every second, so a
    /// minute of silence means it lost the sky or the device).
    public static let gpsFixMaximumAge: UInt64 = 60_000

    /// How the node knows its position.
    public enum Source: String, Sendable, Equatable {
        /// A GPS, through gpsd.
        case gps
        /// The user said so.
        case user
    }

    /// A position and where it comes from.
    public struct Position: Sendable, Equatable {
        /// The point.
        public let location: Location
        /// How it is known.
        public let source: Source
        /// When it was learned (the fix's arrival, or the user's choice), in milliseconds since the epoch.
        public let since: UInt64
    }

    /// What the GPS is doing.
    public enum GPSStatus: Sendable, Equatable {
        /// No GPS is asked (none configured).
        case notUsed
        /// Connecting to gpsd for the first time.
        case connecting
        /// gpsd does not answer, for this reason.
        case unavailable(reason: String)
        /// gpsd answers but has no fix now (`lastFix`: when the last one was received, if ever).
        case noFix(lastFix: UInt64?)
        /// A fix, received at this time.
        case fix(at: UInt64)
        /// The last fix, at this time, is too old to use.
        case stale(lastFix: UInt64)
    }

    /// What happens.
    public enum Event: Sendable, Equatable {
        /// gpsd answered (its first report on a connection).
        case gpsConnected
        /// gpsd could not be reached, or the connection ended, for this reason.
        case gpsUnavailable(reason: String)
        /// gpsd reported a fix at this point.
        case gpsFix(Location)
        /// gpsd reported that it has no fix.
        case gpsNoFix
        /// The user set their position (nil: forgot it).
        case userSet(Location?)
        /// Time passed (a fix may have gone stale).
        case tick
    }

    /// What the shell is to do.
    public enum Directive: Sendable, Equatable {
        /// Tell the user the GPS cannot be reached (once, until it answers again).
        case sayGPSUnavailable(reason: String)
        /// Tell the user the GPS answers again after being unavailable.
        case sayGPSAnswers
        /// The position used changed (nil: no position is known any more).
        case positionChanged(Position?)
        /// Keep the user's choice for the next start.
        case rememberUserLocation(Location?)
    }

    private enum GPSState: Sendable, Equatable {
        case notUsed
        case connecting
        case unavailable(reason: String)
        case answering
    }

    private var gps: GPSState
    private var lastFix: (location: Location, at: UInt64)?
    private var hasFixNow = false
    private var userPosition: Position?
    private var saidUnavailable = false
    private var current: Position?

    /// Whereabouts with the user's remembered position (set at `since`), asking a GPS when `usesGPS`.
    public init(usesGPS: Bool, userLocation: Location?, since: UInt64) {
        gps = usesGPS ? .connecting : .notUsed
        userPosition = userLocation.map { Position(location: $0, source: .user, since: since) }
        current = userPosition
    }

    /// The position in use at `now`.
    public func position(at now: UInt64) -> Position? {
        if let fix = lastFix, hasFixNow, now &- fix.at <= Self.gpsFixMaximumAge, fix.at <= now {
            return Position(location: fix.location, source: .gps, since: fix.at)
        }
        return userPosition
    }

    /// The position the user set, if any (used only while no fresh GPS fix is known).
    public var userSetPosition: Position? { userPosition }

    /// What the GPS is doing at `now`.
    public func gpsStatus(at now: UInt64) -> GPSStatus {
        switch gps {
        case .notUsed: return .notUsed
        case .connecting: return .connecting
        case .unavailable(let reason): return .unavailable(reason: reason)
        case .answering:
            guard let fix = lastFix else { return .noFix(lastFix: nil) }
            guard hasFixNow else { return .noFix(lastFix: fix.at) }
            return now &- fix.at <= Self.gpsFixMaximumAge ? .fix(at: fix.at) : .stale(lastFix: fix.at)
        }
    }

    /// Takes one event at `now`; what to do about it.
    public mutating func handle(_ event: Event, at now: UInt64) -> [Directive] {
        var directives: [Directive] = []
        switch event {
        case .gpsConnected:
            directives += answering()
        case .gpsUnavailable(let reason):
            if !saidUnavailable { directives.append(.sayGPSUnavailable(reason: reason)) }
            saidUnavailable = true
            gps = .unavailable(reason: reason)
            hasFixNow = false
        case .gpsFix(let location):
            directives += answering()
            lastFix = (location, now)
            hasFixNow = true
        case .gpsNoFix:
            directives += answering()
            hasFixNow = false
        case .userSet(let location):
            userPosition = location.map { Position(location: $0, source: .user, since: now) }
            directives.append(.rememberUserLocation(location))
        case .tick:
            break
        }
        let position = position(at: now)
        if position != current {
            current = position
            directives.append(.positionChanged(position))
        }
        return directives
    }

    /// gpsd answers: said when it was said to be unavailable, so that losing it again is said again.
    private mutating func answering() -> [Directive] {
        defer { (gps, saidUnavailable) = (.answering, false) }
        return saidUnavailable ? [.sayGPSAnswers] : []
    }
}
