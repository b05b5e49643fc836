import DongneNet
import DongneRegions
import DongneStore
import DongneSystem
import Synchronization

/// The shell around ``Whereabouts``: feeds it gpsd's reports and the user's choices with the time, remembers the
/// user's position and posting rule in the store, and tells subscribers what changed.
final class NodeWhereabouts: Sendable {
    static let locationSetting = "location"
    static let postingRuleSetting = "postingRule"
    /// Updates a subscriber has not taken yet, beyond which the oldest go: a snapshot supersedes the ones before.
    static let bufferedUpdates = 16

    private struct State {
        var whereabouts: Whereabouts
        var postingRule: PostingRule
        var subscribers: [Int: AsyncStream<WhereaboutsUpdate>.Continuation] = [:]
        var nextSubscriber = 0
        /// Once stopped, a new subscription ends at once (after its first snapshot).
        var stopped = false
    }

    private let state: Mutex<State>
    private let store: Store
    private let now: @Sendable () -> UInt64
    private let gpsd = Mutex<GPSDClient?>(nil)

    /// Whereabouts as the store remembers them (the user's position and rule), with `defaultRule` when the user
    /// never chose one.
    init(store: Store, usesGPS: Bool, defaultRule: PostingRule, now: @escaping @Sendable () -> UInt64) {
        self.store = store
        self.now = now
        // A setting the store cannot read is treated as never set: the node starts, and the user can set it again.
        let storedLocation: [UInt8]? = try? store.setting(Self.locationSetting)
        let storedRule: [UInt8]? = try? store.setting(Self.postingRuleSetting)
        let remembered = storedLocation.flatMap(Self.decodeLocation)
        let rule = storedRule.flatMap { PostingRule(rawValue: String(decoding: $0, as: UTF8.self)) }
        state = Mutex(
            State(
                whereabouts: Whereabouts(
                    usesGPS: usesGPS, userLocation: remembered?.location, since: remembered?.since ?? now()),
                postingRule: rule ?? defaultRule))
    }

    /// Starts asking gpsd at `address`.
    func startGPS(at address: SocketAddress, on loop: EventLoop) {
        let client = GPSDClient(address: address, loop: loop) { [weak self] event in self?.handle(event) }
        gpsd.withLock { $0 = client }
        client.start()
    }

    /// Stops asking gpsd and ends every subscription.
    func stop() {
        gpsd.withLock { $0 }?.stop()
        let subscribers = state.withLock { state in
            defer { (state.subscribers, state.stopped) = ([:], true) }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Where the node is now.
    var snapshot: WhereaboutsSnapshot {
        let at = now()
        return state.withLock { Self.snapshot(of: $0, at: at) }
    }

    /// Sets (or forgets) the user's position and remembers it.
    func setUserLocation(_ location: Location?) async throws {
        if let location {
            try location.validate()
        }
        try await store.setSetting(Self.locationSetting, to: location.map { Self.encode($0, since: now()) } ?? [])
        // The time after the write: a GPS fix taken meanwhile is not later than the event.
        handle(.userSet(location), at: now())
    }

    /// Sets the posting rule and remembers it.
    func setPostingRule(_ rule: PostingRule) async throws {
        try await store.setSetting(Self.postingRuleSetting, to: Array(rule.rawValue.utf8))
        let at = now()
        state.withLock { state in
            state.postingRule = rule
            Self.tell(.changed(Self.snapshot(of: state, at: at)), in: state)
        }
    }

    /// The current snapshot, then every change: snapshots when the position or rule changes, and what the GPS
    /// does.
    func updates() -> AsyncStream<WhereaboutsUpdate> {
        let (stream, continuation) = AsyncStream<WhereaboutsUpdate>.makeStream(
            bufferingPolicy: .bufferingNewest(Self.bufferedUpdates))
        let at = now()
        let id = state.withLock { state -> Int? in
            continuation.yield(.changed(Self.snapshot(of: state, at: at)))
            guard !state.stopped else { return nil }
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    private func handle(_ event: Whereabouts.Event) {
        handle(event, at: now())
    }

    /// The instance takes the event; its directives are carried out here (the user's position is remembered by
    /// ``setUserLocation(_:)`` before the event, so that a failing disk changes nothing). Updates are yielded under
    /// the lock, so that every subscriber gets them in the order the instance took its events (yielding only
    /// queues them), and a snapshot is built only when there is one to send.
    private func handle(_ event: Whereabouts.Event, at now: UInt64) {
        state.withLock { state in
            for directive in state.whereabouts.handle(event, at: now) {
                switch directive {
                case .sayGPSUnavailable(let reason): Self.tell(.gpsUnavailable(reason: reason), in: state)
                case .sayGPSAnswers: Self.tell(.gpsAnswers, in: state)
                case .positionChanged: Self.tell(.changed(Self.snapshot(of: state, at: now)), in: state)
                case .rememberUserLocation: continue
                }
            }
        }
    }

    private static func tell(_ update: WhereaboutsUpdate, in state: State) {
        for subscriber in state.subscribers.values { subscriber.yield(update) }
    }

    private static func snapshot(of state: State, at now: UInt64) -> WhereaboutsSnapshot {
        let position = state.whereabouts.position(at: now)
        var place: Place?
        var bordersUnavailable: String?
        switch RegionMap.shipped {
        case .success(let map):
            place = position.flatMap { map.place(latitude: $0.location.latitude, longitude: $0.location.longitude) }
        case .failure(let error): bordersUnavailable = error.description
        }
        return WhereaboutsSnapshot(
            position: position, gps: state.whereabouts.gpsStatus(at: now), userSet: state.whereabouts.userSetPosition,
            place: place, bordersUnavailable: bordersUnavailable,
            neighbourhoods: position.map { Neighbourhood.around($0.location, in: place) } ?? [],
            postingRule: state.postingRule, at: now)
    }

    private static func encode(_ location: Location, since: UInt64) -> [UInt8] {
        [location.latitude.bitPattern, location.longitude.bitPattern, since].flatMap { value in
            (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
    }

    private static func decodeLocation(_ bytes: [UInt8]) -> (location: Location, since: UInt64)? {
        guard bytes.count == 24 else { return nil }
        let words = (0..<3).map { word in
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[word * 8 + $1]) << (8 * UInt64($1)) }
        }
        let location = Location(latitude: Double(bitPattern: words[0]), longitude: Double(bitPattern: words[1]))
        guard (try? location.validate()) != nil else { return nil }
        return (location, words[2])
    }
}

/// What changed about where the node is.
public enum WhereaboutsUpdate: Sendable, Equatable {
    /// The position, the place or the posting rule changed.
    case changed(WhereaboutsSnapshot)
    /// gpsd cannot be reached (said once, until it answers again), and why.
    case gpsUnavailable(reason: String)
    /// gpsd answers again.
    case gpsAnswers
}
