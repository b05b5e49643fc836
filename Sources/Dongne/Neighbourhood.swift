import DongneRegions

/// A channel for where the user is: their 시·도, 시·군·구 or 읍·면·동, named as people write an address
/// ("서울특별시", "서울특별시 종로구", "서울특별시 종로구 사직동"), or a geohash cell for places without a name
/// ("geohash:wydm6", as BitChat offers them, at precisions 5 to 7).
public struct Neighbourhood: Hashable, Sendable {
    /// How wide the neighbourhood is.
    public enum Level: Hashable, Sendable {
        /// A 시·도.
        case province
        /// A 시·군·구.
        case municipality
        /// A 읍·면·동.
        case submunicipality
        /// A geohash cell of this many characters.
        case geohash(precision: Int)
    }

    /// How wide it is.
    public let level: Level
    /// The channel's name.
    public let channel: String

    /// What geohash channels' names start with.
    public static let geohashPrefix = "geohash:"

    /// The neighbourhoods of a point in `place` (nil: outside Korea's borders), widest first: the named ones, then
    /// the geohash cells from the widest to the narrowest.
    public static func around(_ location: Location, in place: Place?) -> [Neighbourhood] {
        var neighbourhoods: [Neighbourhood] = []
        if let place {
            neighbourhoods.append(Neighbourhood(level: .province, channel: place.province.name))
            neighbourhoods.append(Neighbourhood(level: .municipality, channel: municipalityChannel(place)))
            if let submunicipality = place.submunicipality {
                neighbourhoods.append(
                    Neighbourhood(
                        level: .submunicipality, channel: municipalityChannel(place) + " " + submunicipality.name))
            }
        }
        for precision in Geohash.channelPrecisions {
            guard let cell = Geohash.encode(latitude: location.latitude, longitude: location.longitude, precision: precision)
            else { continue }
            neighbourhoods.append(Neighbourhood(level: .geohash(precision: precision), channel: geohashPrefix + cell))
        }
        return neighbourhoods
    }

    /// Whether a channel is named after a place: a 시·도, 시·군·구 or 읍·면·동 of the borders shipped, or a geohash
    /// cell. Only those are restricted by ``PostingRule/ownNeighbourhood``; a channel named after a topic is not
    /// a place anyone is in.
    public static func isPlaceChannel(_ name: String) -> Bool {
        if name.hasPrefix(geohashPrefix) { return Geohash.isValid(String(name.dropFirst(geohashPrefix.count))) }
        return placeChannelNames.contains(name)
    }

    private static func municipalityChannel(_ place: Place) -> String {
        place.province.name + " " + place.municipality.name
    }

    /// Every named place's channels, built once (a few thousand names).
    private static let placeChannelNames: Set<String> = {
        guard case .success(let map) = RegionMap.shipped else { return [] }
        var names: Set<String> = []
        for place in map.everyPlace() {
            for neighbourhood in around(Location(latitude: .nan, longitude: .nan), in: place) {
                names.insert(neighbourhood.channel)
            }
        }
        return names
    }()
}
