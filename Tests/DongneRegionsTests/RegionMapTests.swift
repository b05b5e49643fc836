import Foundation
import Testing

@testable import DongneRegions

/// Offline reverse geocoding with KOSTAT's borders (Sources/DongneRegions/korea-regions). Every expected place below was computed
/// from KOSTAT's TopoJSON by a plain point-in-polygon written apart from this code (Python, every area tried); the
/// points on either side of a border were placed 300 m off a border segment shared by the two 시·도 in KOSTAT's
/// separate file of 시·도 borders, which the shipped map does not use.
@Suite struct RegionMapTests {
    static let map: RegionMap = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try! RegionMap(contentsOf: root.appendingPathComponent("Sources/DongneRegions/korea-regions/regions.bin").path)
    }()

    /// A point in each of the 17 시·도 (its seat), with today's names.
    static let seats: [(Double, Double, String, String, String)] = [
        (37.5665, 126.9780, "서울특별시", "중구", "명동"), (35.1796, 129.0756, "부산광역시", "연제구", "연산5동"),
        (35.8714, 128.6014, "대구광역시", "중구", "동인동"), (37.4563, 126.7052, "인천광역시", "남동구", "구월3동"),
        (35.1595, 126.8526, "광주광역시", "서구", "치평동"), (36.3504, 127.3845, "대전광역시", "서구", "둔산1동"),
        (35.5384, 129.3114, "울산광역시", "남구", "신정1동"), (36.4800, 127.2890, "세종특별자치시", "세종시", "보람동"),
        (37.2636, 127.0286, "경기도", "수원시팔달구", "인계동"), (37.8813, 127.7298, "강원특별자치도", "춘천시", "소양동"),
        (36.6424, 127.4890, "충청북도", "청주시상당구", "중앙동"), (36.6012, 126.6608, "충청남도", "홍성군", "홍성읍"),
        (35.8242, 127.1480, "전북특별자치도", "전주시완산구", "노송동"), (34.9907, 126.4817, "전라남도", "무안군", "무안읍"),
        (36.5684, 128.7294, "경상북도", "안동시", "명륜동"), (35.2280, 128.6811, "경상남도", "창원시의창구", "용지동"),
        (33.4996, 126.5312, "제주특별자치도", "제주시", "이도2동"),
    ]

    @Test func aPointInEachOfTheSeventeenProvincesResolvesToItWithTodaysNames() {
        #expect(Set(Self.seats.map(\.2)).count == 17)
        for (latitude, longitude, province, municipality, submunicipality) in Self.seats {
            let place = Self.map.place(latitude: latitude, longitude: longitude)
            #expect(place?.province.name == province, "\(latitude), \(longitude)")
            #expect(place?.municipality.name == municipality && place?.submunicipality?.name == submunicipality)
        }
    }

    @Test func theNeighbourhoodOfTheIssueAndACountyThatMovedProvince() {
        let sajik = Self.map.place(latitude: 37.5759, longitude: 126.9690)
        #expect(sajik.map { "\($0.province.name) \($0.municipality.name) \($0.submunicipality?.name ?? "")" }
            == "서울특별시 종로구 사직동")
        #expect(sajik?.submunicipality?.code == "1101053" && sajik?.province.englishName == "Seoul")
        let gunwi = Self.map.place(latitude: 36.2428, longitude: 128.5728)
        #expect(gunwi?.municipality.name == "군위군" && gunwi?.province.name == "대구광역시", "대구광역시 since 2023")
    }

    /// Points 300 m either side of the borders the issue names (and Daegu–Gyeongbuk).
    @Test func pointsEitherSideOfABorderResolveToTheirSide() {
        let sides: [(Double, Double, String)] = [
            (37.648004, 126.917791, "31"), (37.642643, 126.918856, "11"),
            (37.451403, 127.094079, "31"), (37.454256, 127.088303, "11"),
            (35.259622, 129.006144, "38"), (35.257508, 129.012223, "21"),
            (35.251305, 129.001832, "38"), (35.249157, 129.007893, "21"),
            (36.454113, 127.354090, "29"), (36.452059, 127.360293, "25"),
            (36.498775, 127.391725, "29"), (36.494759, 127.387215, "25"),
            (35.812053, 128.431008, "37"), (35.806625, 128.430986, "22"),
        ]
        for (latitude, longitude, province) in sides {
            #expect(Self.map.place(latitude: latitude, longitude: longitude)?.province.code == province,
                "\(latitude), \(longitude)")
        }
    }

    @Test func aPointAbroadOrAtSeaIsInNoPlace() {
        #expect(Self.map.place(latitude: 35.6812, longitude: 139.7671) == nil, "Tokyo")
        #expect(Self.map.place(latitude: 36.0, longitude: 125.0) == nil, "the Yellow Sea")
        #expect(Self.map.place(latitude: .nan, longitude: 127) == nil)
        #expect(Self.map.place(latitude: 90, longitude: 180) == nil)
    }

    /// The grid only narrows the search: every point resolves as trying every area would.
    @Test func theGridFindsWhatTryingEveryAreaFinds() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let latitude = Double.random(in: 33.0...38.7, using: &generator)
            let longitude = Double.random(in: 124.5...131.0, using: &generator)
            for level in [Self.map.municipalities, Self.map.submunicipalities] {
                let x = Int32(((longitude - level.translateX) / level.scaleX).rounded())
                let y = Int32(((latitude - level.translateY) / level.scaleY).rounded())
                let everyArea = level.features.first { $0.bounds.contains(x, y) && $0.polygons.contains { level.contains($0, x, y) } }
                #expect(level.feature(latitude: latitude, longitude: longitude)?.area == everyArea?.area)
            }
        }
    }

    @Test func theShippedMapIsFoundBesideTheProgramAndAMissingOneIsAClearError() throws {
        let besideProgram = RegionMap.shippedFileCandidates.dropLast()
        #expect(besideProgram.contains { FileManager.default.fileExists(atPath: $0) }, "\(besideProgram)")
        #expect(try RegionMap.shipped.get().place(latitude: 37.5759, longitude: 126.9690)?.province.name == "서울특별시")
        let missing = RegionMap.load(fromFirstOf: ["/nonexistent/regions.bin"])
        #expect(throws: RegionMap.FormatError.self) { try missing.get() }
        if case .failure(let error) = missing {
            #expect(error.description == "the borders file is not installed beside the program")
        }
    }

    @Test func aDamagedFileIsAClearErrorNotATrap() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let bytes = try [UInt8](Data(contentsOf: root.appendingPathComponent("Sources/DongneRegions/korea-regions/regions.bin")))
        #expect(throws: RegionMap.FormatError.self) { try RegionMap(bytes: Array(bytes.prefix(bytes.count / 2))) }
        #expect(throws: RegionMap.FormatError.self) { try RegionMap(bytes: Array("not a map".utf8)) }
        #expect(throws: RegionMap.FormatError.self) { try RegionMap(bytes: bytes + [0]) }
    }
}
