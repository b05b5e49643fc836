import Testing

@testable import DongneCore

/// Geohash against published values, distances, typed positions, and one test per sentence of ``Whereabouts``'s
/// contract.
@Suite struct WhereaboutsTests {
    static let seoul = Location(latitude: 37.5759, longitude: 126.9690)
    static let gyeonggi = Location(latitude: 37.648004, longitude: 126.917791)

    /// geohash.org's and Wikipedia's published examples.
    @Test func geohashMatchesPublishedValues() {
        #expect(Geohash.encode(latitude: 57.64911, longitude: 10.40744, precision: 11) == "u4pruydqqvj")
        #expect(Geohash.encode(latitude: 42.6, longitude: -5.6, precision: 5) == "ezs42")
        #expect(Geohash.encode(latitude: -25.382708, longitude: -49.265506, precision: 11) == "6gkzwgjzn82")
        #expect(Geohash.encode(latitude: 91, longitude: 0, precision: 5) == nil)
        #expect(Geohash.encode(latitude: .nan, longitude: 0, precision: 5) == nil)
        #expect(Geohash.isValid("wydm6") && !Geohash.isValid("wydma") && !Geohash.isValid(""))
    }

    /// Seoul City Hall to Busan City Hall is 325 km as the crow flies; a degree of latitude is 111.2 km.
    @Test func distancesAreGreatCircleDistances() {
        let busan = Location(latitude: 35.1798, longitude: 129.0750)
        let cityHall = Location(latitude: 37.5663, longitude: 126.9779)
        #expect(abs(GreatCircle.distance(from: cityHall, to: busan) - 325_000) < 2_000)
        let degree = GreatCircle.distance(from: Location(latitude: 0, longitude: 0), to: Location(latitude: 1, longitude: 0))
        #expect(abs(degree - 111_195) < 1)
        #expect(GreatCircle.spoken(metres: 1_234) == "1.2 km")
        #expect(GreatCircle.spoken(metres: 348) == "350 m")
        #expect(GreatCircle.spoken(metres: 24_400) == "24 km")
        #expect(GreatCircle.spoken(metres: 997) == "1.0 km", "not \"1000 m\"")
        #expect(GreatCircle.spoken(metres: .infinity) == "?" && GreatCircle.spoken(metres: 1e300) == "?")
    }

    @Test func aTypedPositionIsTwoNumbersInRange() throws {
        #expect(try Location(parsing: "37.5759,126.9690") == Self.seoul)
        #expect(try Location(parsing: "37.5759 126.9690") == Self.seoul)
        #expect(throws: LocationInputError.notTwoNumbers("서울")) { try Location(parsing: "서울") }
        #expect(throws: LocationInputError.latitudeOutOfRange(97)) { try Location(parsing: "97,126") }
        #expect(throws: LocationInputError.longitudeOutOfRange(190)) { try Location(parsing: "37,190") }
        #expect(throws: LocationInputError.notTwoNumbers("nan,1")) { try Location(parsing: "nan,1") }
    }

    /// 1. A GPS fix is used while it is at most a minute old; then it is stale and not used.
    @Test func aGPSFixIsUsedWhileItIsRecent() {
        var whereabouts = Whereabouts(usesGPS: true, userLocation: nil, since: 0)
        _ = whereabouts.handle(.gpsConnected, at: 1_000)
        #expect(whereabouts.gpsStatus(at: 1_000) == .noFix(lastFix: nil))
        _ = whereabouts.handle(.gpsFix(Self.seoul), at: 2_000)
        #expect(whereabouts.position(at: 2_000 + Whereabouts.gpsFixMaximumAge)?.source == .gps)
        let later = 2_001 + Whereabouts.gpsFixMaximumAge
        #expect(whereabouts.position(at: later) == nil)
        #expect(whereabouts.gpsStatus(at: later) == .stale(lastFix: 2_000))
        _ = whereabouts.handle(.gpsNoFix, at: 3_000)
        #expect(whereabouts.position(at: 3_000) == nil)
        #expect(whereabouts.gpsStatus(at: 3_000) == .noFix(lastFix: 2_000))
    }

    /// 2. Without a fresh fix, the user's position is used however old; a fix wins over it.
    @Test func theUsersPositionIsUsedWhileNoFixIs() {
        var whereabouts = Whereabouts(usesGPS: true, userLocation: Self.seoul, since: 0)
        let year: UInt64 = 365 * 86_400_000
        #expect(whereabouts.position(at: year) == Whereabouts.Position(location: Self.seoul, source: .user, since: 0))
        _ = whereabouts.handle(.gpsFix(Self.gyeonggi), at: year)
        #expect(whereabouts.position(at: year)?.location == Self.gyeonggi)
        #expect(whereabouts.position(at: year + Whereabouts.gpsFixMaximumAge + 1)?.location == Self.seoul)
    }

    /// 3. Every change of the position used yields one directive; an event that changes nothing yields none.
    @Test func everyChangeOfThePositionIsSaidOnce() {
        var whereabouts = Whereabouts(usesGPS: true, userLocation: nil, since: 0)
        #expect(whereabouts.handle(.gpsConnected, at: 1) == [])
        let fix = whereabouts.handle(.gpsFix(Self.seoul), at: 2)
        #expect(fix == [.positionChanged(Whereabouts.Position(location: Self.seoul, source: .gps, since: 2))])
        #expect(whereabouts.handle(.tick, at: 3) == [])
        #expect(whereabouts.handle(.tick, at: 3 + Whereabouts.gpsFixMaximumAge) == [.positionChanged(nil)])
        #expect(whereabouts.handle(.tick, at: 4 + Whereabouts.gpsFixMaximumAge) == [])
    }

    /// 4. A GPS that cannot be reached is said once, not at every retry; after it answers, losing it is said again.
    @Test func anUnreachableGPSIsSaidOnce() {
        var whereabouts = Whereabouts(usesGPS: true, userLocation: nil, since: 0)
        #expect(whereabouts.handle(.gpsUnavailable(reason: "refused"), at: 1) == [.sayGPSUnavailable(reason: "refused")])
        #expect(whereabouts.handle(.gpsUnavailable(reason: "refused"), at: 2) == [])
        #expect(whereabouts.gpsStatus(at: 2) == .unavailable(reason: "refused"))
        #expect(whereabouts.handle(.gpsConnected, at: 3) == [.sayGPSAnswers])
        #expect(whereabouts.handle(.gpsUnavailable(reason: "closed"), at: 4) == [.sayGPSUnavailable(reason: "closed")])
        // A report without a greeting first also means it answers.
        #expect(whereabouts.handle(.gpsNoFix, at: 5) == [.sayGPSAnswers])
        #expect(whereabouts.handle(.gpsUnavailable(reason: "closed"), at: 6) == [.sayGPSUnavailable(reason: "closed")])
        #expect(whereabouts.handle(.gpsFix(Self.seoul), at: 7).first == .sayGPSAnswers)
    }

    /// 5. The user's choice is to be remembered whenever it changes.
    @Test func theUsersChoiceIsRemembered() {
        var whereabouts = Whereabouts(usesGPS: false, userLocation: nil, since: 0)
        #expect(whereabouts.gpsStatus(at: 0) == .notUsed)
        let set = whereabouts.handle(.userSet(Self.seoul), at: 5)
        #expect(set == [.rememberUserLocation(Self.seoul), .positionChanged(.init(location: Self.seoul, source: .user, since: 5))])
        #expect(whereabouts.handle(.userSet(nil), at: 6) == [.rememberUserLocation(nil), .positionChanged(nil)])
    }
}
