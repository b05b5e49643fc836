import DongneStore
import DongneRegions

extension Node {
    /// Where the node is now: its position and how it is known, the place, the neighbourhood channels, and
    /// where the user may post.
    public var whereabouts: WhereaboutsSnapshot { whereaboutsShell.snapshot }

    /// ``whereabouts`` now, then every change of it and what the GPS does, as a listener gets a first snapshot
    /// and then changes (at most 16 updates wait for a slow reader; older ones go first, and every snapshot
    /// holds the whole state, the GPS's status included). Ends when the node stops.
    public func whereaboutsUpdates() -> AsyncStream<WhereaboutsUpdate> { whereaboutsShell.updates() }

    /// Sets the user's position (used while no GPS has a recent fix) and remembers it for the next start; nil
    /// forgets it.
    public func setLocation(_ location: Location?) async throws {
        do { try await whereaboutsShell.setUserLocation(location) } catch let error as DocumentError {
            throw DongneError.invalidDocument(error)
        }
    }

    /// Sets where the user may post, and remembers it.
    public func setPostingRule(_ rule: PostingRule) async throws {
        try await whereaboutsShell.setPostingRule(rule)
    }

    /// A location in words: the place it is in and how far it is from the node's position. A location outside
    /// the rules of a location message (latitude ±90°, longitude ±180°) is in no place and at no distance.
    public func describe(_ location: Location) -> LocationDescription {
        guard (try? location.validate()) != nil else {
            return LocationDescription(location: location, place: nil, distance: nil)
        }
        let here = whereabouts.position?.location
        var place: Place?
        if case .success(let map) = RegionMap.shipped {
            place = map.place(latitude: location.latitude, longitude: location.longitude)
        }
        return LocationDescription(
            location: location, place: place,
            distance: here.map { GreatCircle.distance(from: $0, to: location) })
    }

    /// The channels for where the node is, with what this node knows of each: how many messages it stores and
    /// from how many people.
    public func nearbyChannels() throws -> [NearbyChannel] {
        try whereabouts.neighbourhoods.map { neighbourhood in
            let name = try ChannelName(normalizing: neighbourhood.channel)
            let activity = try store.messageActivity(in: name.id)
            return NearbyChannel(
                neighbourhood: neighbourhood, messages: activity.messages, people: activity.people)
        }
    }

    /// Throws when the posting rule keeps the user out of `channel` (a place they are not in).
    func checkMayPost(in channel: ChannelName) throws {
        let now = whereabouts
        guard let allowed = now.mayPostIn, Neighbourhood.isPlaceChannel(channel.value),
            !allowed.contains(channel.value)
        else { return }
        throw DongneError.notYourNeighbourhood(channel: channel.value, mayPostIn: allowed)
    }
}

/// A location in words.
public struct LocationDescription: Sendable, Equatable {
    /// The point.
    public let location: Location
    /// Its 시·도, 시·군·구 and 읍·면·동; nil outside Korea's borders.
    public let place: Place?
    /// Its distance from the node's position in metres; nil when the node does not know where it is.
    public let distance: Double?

    /// The place as people say it, narrowest first ("사직동, 종로구, 서울특별시"); nil outside Korea.
    public var placeName: String? {
        guard let place else { return nil }
        return ([place.submunicipality?.name, place.municipality.name, place.province.name] as [String?])
            .compactMap { $0 }.joined(separator: ", ")
    }

    /// A location described; ``Node/describe(_:)`` fills it in.
    public init(location: Location, place: Place?, distance: Double?) {
        self.location = location
        self.place = place
        self.distance = distance
    }

    /// The distance as people say it ("1.2 km").
    public var spokenDistance: String? { distance.map { GreatCircle.spoken(metres: $0) } }

    /// The point on OpenStreetMap.
    public var mapLink: String {
        let latitude = Self.degrees(location.latitude), longitude = Self.degrees(location.longitude)
        return "https://www.openstreetmap.org/?mlat=\(latitude)&mlon=\(longitude)#map=16/\(latitude)/\(longitude)"
    }

    private static func degrees(_ value: Double) -> String {
        guard value.isFinite, abs(value) <= 360 else { return "\(value)" }
        let scaled = (value * 100_000).rounded()
        let sign = scaled < 0 ? "-" : ""
        let magnitude = Int(abs(scaled))
        let fraction = String(magnitude % 100_000)
        return sign + "\(magnitude / 100_000)." + String(repeating: "0", count: 5 - fraction.count) + fraction
    }
}

/// A channel for where the node is, with what this node knows of it.
public struct NearbyChannel: Sendable, Equatable {
    /// The neighbourhood and its channel's name.
    public let neighbourhood: Neighbourhood
    /// The messages this node stores in it.
    public let messages: Int
    /// The people who wrote them.
    public let people: Int
}
