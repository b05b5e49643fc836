import Foundation
import Synchronization
import Testing

@testable import Dongne

/// Where the node is, through the library: the posting rule, what the node remembers, locations in words, the
/// channels nearby, and a real gpsd fed by gpsfake with a track across the Seoul–Gyeonggi border.
@Suite struct WhereaboutsNodeTests {
    /// In 서울특별시 종로구 사직동.
    static let sajik = Location(latitude: 37.5759, longitude: 126.9690)
    /// Either side of the Seoul (은평구) – Gyeonggi (고양시) border, 300 m from it (RegionMapTests).
    static let seoulSide = (latitude: 37.642643, longitude: 126.918856)
    static let gyeonggiSide = (latitude: 37.648004, longitude: 126.917791)

    @Test func postingIsKeptToTheChannelsOfWhereTheUserIs() async throws {
        let test = try await TestNode.start(location: Self.sajik, postingRule: .ownNeighbourhood)
        defer { test.stop() }
        let here = test.node.whereabouts
        #expect(here.placeName == "서울특별시 종로구 사직동")
        #expect(here.mayPostIn?.prefix(3) == ["서울특별시", "서울특별시 종로구", "서울특별시 종로구 사직동"])
        let geohash = "geohash:" + Geohash.encode(latitude: 37.5759, longitude: 126.9690, precision: 6)!
        for allowed in ["서울특별시", "서울특별시 종로구", "서울특별시 종로구 사직동", geohash, "동네 개발자"] {
            try await test.node.channel(named: allowed).send(.text("안녕"))
        }
        for refused in ["경기도", "서울특별시 중구", "서울특별시 종로구 청운효자동", "geohash:wydm6"] {
            await #expect(throws: DongneError.notYourNeighbourhood(channel: refused, mayPostIn: here.mayPostIn!)) {
                try await test.node.channel(named: refused).send(.text("안녕"))
            }
        }
        try await test.node.setPostingRule(.anywhere)
        try await test.node.channel(named: "경기도").send(.text("어디든"))
    }

    @Test func nothingIsRefusedWhileThePositionIsUnknown() async throws {
        let test = try await TestNode.start(postingRule: .ownNeighbourhood)
        defer { test.stop() }
        #expect(test.node.whereabouts.position == nil && test.node.whereabouts.mayPostIn == nil)
        try await test.node.channel(named: "경기도").send(.text("어디인지 모름"))
    }

    @Test func theUsersPositionAndRuleAreRememberedAcrossAStart() async throws {
        let directory = NSTemporaryDirectory() + "dongne-where-" + UUID().uuidString
        let first = try await TestNode.start(directory: directory)
        try await first.node.setLocation(Self.sajik)
        try await first.node.setPostingRule(.ownNeighbourhood)
        await first.node.stop()
        let second = try await TestNode.start(directory: directory)
        defer { second.stop() }
        #expect(second.node.whereabouts.position?.location == Self.sajik)
        #expect(second.node.whereabouts.position?.source == .user)
        #expect(second.node.whereabouts.postingRule == .ownNeighbourhood, "the user's choice, not the default")
        try await second.node.setLocation(nil)
        #expect(second.node.whereabouts.position == nil)
    }

    @Test func anInvalidLocationIsRefusedWithTheRule() async throws {
        await #expect(throws: DongneError.invalidDocument(.latitudeOutOfRange(97))) {
            _ = try await TestNode.start(location: Location(latitude: 97, longitude: 126))
        }
        let test = try await TestNode.start()
        defer { test.stop() }
        await #expect(throws: DongneError.invalidDocument(.nonFiniteNumber(field: "longitude"))) {
            try await test.node.setLocation(Location(latitude: 37, longitude: .infinity))
        }
        #expect(test.node.whereabouts.position == nil, "nothing changed")
    }

    @Test func aLocationIsDescribedByItsPlaceAndDistance() async throws {
        let test = try await TestNode.start(location: Self.sajik)
        defer { test.stop() }
        let cityHall = test.node.describe(Location(latitude: 37.5665, longitude: 126.9780))
        #expect(cityHall.placeName == "명동, 중구, 서울특별시")
        #expect(cityHall.spokenDistance == "1.3 km")
        #expect(cityHall.mapLink == "https://www.openstreetmap.org/?mlat=37.56650&mlon=126.97800#map=16/37.56650/126.97800")
        let tokyo = test.node.describe(Location(latitude: 35.6812, longitude: 139.7671))
        #expect(tokyo.place == nil && tokyo.spokenDistance == "1160 km")
    }

    @Test func nearbyChannelsCountThePeopleAndMessagesThisNodeKnows() async throws {
        let test = try await TestNode.start(location: Self.sajik)
        defer { test.stop() }
        try await test.node.channel(named: "서울특별시 종로구").send(.text("하나"))
        try await test.node.channel(named: "서울특별시 종로구").send(.text("둘"))
        let nearby = try test.node.nearbyChannels()
        #expect(nearby.map(\.neighbourhood.channel).prefix(3) == ["서울특별시", "서울특별시 종로구", "서울특별시 종로구 사직동"])
        #expect(nearby.map(\.neighbourhood.level).suffix(3) == [.geohash(precision: 5), .geohash(precision: 6), .geohash(precision: 7)])
        #expect(nearby[1].messages == 2 && nearby[1].people == 1)
        #expect(nearby[0].messages == 0 && nearby[0].people == 0)
    }

    @Test func withoutGPSDTheNodeSaysSoOnceAndUsesTheUsersPosition() async throws {
        let test = try await TestNode.start(location: Self.sajik, gpsd: "127.0.0.1:\(GPSFake.freePort())")
        defer { test.stop() }
        // A listener that comes before the refusal gets the notice; one that comes after, the first snapshot,
        // which holds the GPS's status.
        let updates = test.node.whereaboutsUpdates()
        _ = try await Self.first(in: updates) { update in
            switch update {
            case .gpsUnavailable: true
            case .changed(let snapshot): if case .unavailable = snapshot.gps { true } else { false }
            case .gpsAnswers: false
            }
        }
        let said = test.node.whereabouts
        guard case .unavailable(let reason) = said.gps else {
            Issue.record("\(said.gps)")
            return
        }
        #expect(reason.contains("gpsd does not answer on 127.0.0.1:"))
        #expect(said.position?.source == .user && said.placeName == "서울특별시 종로구 사직동")
    }

    /// A track from 은평구 (Seoul) into 고양시 (Gyeonggi), played in a loop: 20 fixes on the Seoul side (gpsd spends
    /// the first few recognising the device), 12 across, 50 on the other side (10 s to post from there). A
    /// listener that falls behind loses the oldest updates, so the test waits for a loop's Seoul side, then for
    /// the Gyeonggi side after it. The user's own position is in Busan, used again once gpsd stops.
    /// Something that accepts and hangs up (a socket whose daemon fails to start) is not gpsd: the node says once
    /// that no GPS answers, never that it answers again, and keeps backing off.
    @Test func somethingThatAcceptsAndHangsUpIsNotAGPS() async throws {
        let listener = try HangUpListener(limit: 3)
        defer { listener.stop() }
        let test = try await TestNode.start(location: Self.sajik, gpsd: "127.0.0.1:\(listener.port)")
        defer { test.stop() }
        let seen = Mutex<[WhereaboutsUpdate]>([])
        let updates = test.node.whereaboutsUpdates()
        let reader = Task { for await update in updates { seen.withLock { $0.append(update) } } }
        defer { reader.cancel() }
        let deadline = ContinuousClock.now + .seconds(60)
        while listener.acceptedAt.count < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let accepted = listener.acceptedAt
        try #require(accepted.count == 3, "dialled again twice")
        #expect(accepted[2] - accepted[1] > (accepted[1] - accepted[0]) * 1.5, "the back-off grows: \(accepted)")
        let updatesSeen = seen.withLock { $0 }
        #expect(!updatesSeen.contains(.gpsAnswers), "\(updatesSeen)")
        #expect(test.node.whereabouts.position?.source == .user)
        if case .unavailable(let reason) = test.node.whereabouts.gps {
            #expect(reason.contains("closed the connection"), "\(reason)")
        } else {
            Issue.record("the GPS is \(test.node.whereabouts.gps), not unavailable")
        }
    }

    /// A port whose program never speaks (the kernel completes the connection) is not gpsd either.
    @Test func somethingThatAcceptsAndSaysNothingIsNotAGPS() async throws {
        let listener = try HangUpListener.silent()
        defer { listener.stop() }
        let test = try await TestNode.start(location: Self.sajik, gpsd: "127.0.0.1:\(listener.port)")
        defer { test.stop() }
        let updates = test.node.whereaboutsUpdates()
        let said = try await Self.first(in: updates) { if case .gpsUnavailable = $0 { true } else { false } }
        #expect(said == .gpsUnavailable(reason: "what answers on 127.0.0.1:\(listener.port) said nothing in 5.0 seconds: it is not gpsd"))
    }

    @Test func gpsdsLinesAreReadForThePositionAndAnythingElseIsNotAReport() {
        let tpv = #"{"class":"TPV","device":"/dev/ttyUSB0","mode":3,"lat":37.5759,"lon":126.969,"alt":30.1}"#
        #expect(GPSDReport.reading(fromLine: Array(tpv.utf8)) == .report(.gpsFix(Location(latitude: 37.5759, longitude: 126.969))))
        #expect(GPSDReport.reading(fromLine: Array(#"{"class":"TPV","mode":1}"#.utf8)) == .report(.gpsNoFix))
        #expect(GPSDReport.reading(fromLine: Array(#"{"class":"TPV","mode":3,"lat":97,"lon":1}"#.utf8)) == .report(.gpsNoFix))
        #expect(GPSDReport.reading(fromLine: Array(#"{"class":"VERSION","release":"3.22"}"#.utf8)) == .report(nil))
        #expect(GPSDReport.reading(fromLine: Array("SSH-2.0-OpenSSH_9.2".utf8)) == .notAReport)
        #expect(GPSDReport.reading(fromLine: Array(#"{"mode":3}"#.utf8)) == .notAReport)
    }

    @Test func theNeighbourhoodFollowsAGPSAcrossAProvinceBorder() async throws {
        let gps = try GPSFake.start(track: Self.borderTrack(gyeonggiFixes: 50))
        defer { gps.stop() }
        let busan = Location(latitude: 35.1796, longitude: 129.0756)
        let test = try await TestNode.start(
            location: busan, postingRule: .ownNeighbourhood, gpsd: "127.0.0.1:\(gps.port)")
        defer { test.stop() }
        let updates = test.node.whereaboutsUpdates()
        let inSeoul = try await Self.snapshot(in: updates) { $0.position?.source == .gps && $0.place?.province.name == "서울특별시" }
        #expect(inSeoul.mayPostIn?.contains("서울특별시") == true && inSeoul.mayPostIn?.contains("경기도") == false)
        let inGyeonggi = try await Self.snapshot(in: updates) { $0.place?.province.name == "경기도" }
        #expect(inGyeonggi.position?.source == .gps && inGyeonggi.place?.municipality.name.hasPrefix("고양시") == true)
        #expect(inGyeonggi.mayPostIn?.contains("경기도") == true && inGyeonggi.mayPostIn?.contains("서울특별시") == false)
        // Still on the Gyeonggi side: the rule follows.
        try await test.node.channel(named: "경기도").send(.text("경기도에 왔어요"))
        do {
            try await test.node.channel(named: "서울특별시").send(.text("아직 서울?"))
            Issue.record("a post in 서울특별시 from 경기도 was accepted")
        } catch DongneError.notYourNeighbourhood(let channel, let allowed) {
            #expect(channel == "서울특별시" && allowed.contains("경기도"))
        }
        // gpsd stops: the node says so, and uses the user's position again.
        gps.stop()
        let back = try await Self.snapshot(in: updates) { $0.position?.source == .user }
        #expect(back.place?.province.name == "부산광역시")
    }

    /// From 은평구 (Seoul) into 고양시 (Gyeonggi): 20 fixes on the Seoul side (gpsd spends the first few recognising
    /// the device), 12 across, then `gyeonggiFixes` on the other side.
    static func borderTrack(gyeonggiFixes: Int) -> [(latitude: Double, longitude: Double)] {
        let (south, north) = (seoulSide, gyeonggiSide)
        let across = (0..<12).map { step in
            let t = Double(step) / 11
            return (latitude: south.latitude + (north.latitude - south.latitude) * t,
                longitude: south.longitude + (north.longitude - south.longitude) * t)
        }
        return Array(repeating: south, count: 20) + across + Array(repeating: north, count: gyeonggiFixes)
    }

    /// The first update that `matches`, within 60 s.
    static func first(
        in updates: AsyncStream<WhereaboutsUpdate>, _ matches: @escaping @Sendable (WhereaboutsUpdate) -> Bool
    ) async throws -> WhereaboutsUpdate {
        try await withThrowingTaskGroup(of: WhereaboutsUpdate?.self) { group in
            group.addTask {
                for await update in updates where matches(update) { return update }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            let found = try await group.next() ?? nil
            group.cancelAll()
            guard let found else { throw CancellationError() }
            return found
        }
    }

    /// The first snapshot that `matches`, within 60 s.
    static func snapshot(
        in updates: AsyncStream<WhereaboutsUpdate>, _ matches: @escaping @Sendable (WhereaboutsSnapshot) -> Bool
    ) async throws -> WhereaboutsSnapshot {
        let update = try await first(in: updates) { update in
            if case .changed(let snapshot) = update { matches(snapshot) } else { false }
        }
        guard case .changed(let snapshot) = update else { throw CancellationError() }
        return snapshot
    }
}
