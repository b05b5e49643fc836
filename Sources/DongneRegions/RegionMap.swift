import Foundation

/// South Korea's administrative borders, looked up offline: which 시·도, 시·군·구 and 읍·면·동 a point is in.
///
/// The borders are KOSTAT's of 2018 (통계청 통계지리정보서비스, Korea Open Government License type 1; see
/// `Sources/DongneRegions/korea-regions/README.md`), in the compact form `scripts/derive-regions` makes, with the renames since
/// (강원특별자치도, 전북특별자치도, and 군위군 in 대구광역시). A point outside every 시·군·구 (abroad, or at sea) is in
/// no place.
public struct RegionMap: Sendable {
    let provinces: [String: Area]
    let municipalities: RegionLevel
    let submunicipalities: RegionLevel

    /// Why a borders file could not be read.
    public struct FormatError: Error, CustomStringConvertible {
        /// What was wrong.
        public let description: String
    }

    /// The map shipped with this module (`korea-regions/regions.bin`), read once per process at its first use.
    public static let shipped: Result<RegionMap, FormatError> = load(fromFirstOf: shippedFileCandidates)

    /// Where the shipped borders may be: in the resource folder the build puts beside the program, then in the
    /// source tree this module was built from. SwiftPM's own `Bundle.module` would end the process when the
    /// folder is missing (a binary copied elsewhere); a missing map must be a clear error instead.
    static var shippedFileCandidates: [String] {
        let resources = "dongne_DongneRegions.resources/korea-regions/regions.bin"
        var candidates = [Bundle.main.bundleURL.appendingPathComponent(resources).path]
        if let program = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent() {
            candidates.append(program.appendingPathComponent(resources).path)
        }
        candidates.append(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "korea-regions/regions.bin"
            ).path)
        return candidates
    }

    /// The map in the first of `paths` that exists, or why there is none.
    static func load(fromFirstOf paths: [String]) -> Result<RegionMap, FormatError> {
        guard let path = paths.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            return .failure(FormatError(description: "the borders file is not installed beside the program"))
        }
        do { return .success(try RegionMap(contentsOf: path)) } catch let error as FormatError {
            return .failure(error)
        } catch {
            return .failure(FormatError(description: "\(error)"))
        }
    }

    /// The map in the file at `path` (`Sources/DongneRegions/korea-regions/regions.bin`).
    public init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FormatError(description: "\(path): cannot be read")
        }
        try self.init(bytes: [UInt8](data))
    }

    /// The map these bytes encode.
    public init(bytes: [UInt8]) throws {
        var reader = RegionReader(bytes)
        guard try reader.take(8) == Array("DNGREG1".utf8) + [0] else {
            throw FormatError(description: "not a dongne borders file (version 1)")
        }
        var provinces: [String: Area] = [:]
        for _ in 0..<(try reader.count()) {
            let code = try reader.text()
            provinces[code] = Area(code: code, name: try reader.text(), englishName: try reader.text())
        }
        self.provinces = provinces
        municipalities = try reader.level()
        submunicipalities = try reader.level()
        guard reader.isAtEnd else { throw FormatError(description: "bytes after the last level") }
    }

    /// The area of one level (0: 시·군·구, 1: 읍·면·동) that holds the point, found through the grid; for measuring
    /// each level's lookups apart.
    @_spi(Benchmark)
    public func area(level: Int, latitude: Double, longitude: Double) -> Area? {
        (level == 0 ? municipalities : submunicipalities).feature(latitude: latitude, longitude: longitude)?.area
    }

    /// The same, found by trying every polygon of the level, edge by edge: the brute force the grid is measured
    /// against.
    @_spi(Benchmark)
    public func areaTryingEveryArea(level: Int, latitude: Double, longitude: Double) -> Area? {
        let areas = level == 0 ? municipalities : submunicipalities
        let (x, y) = areas.quantized(latitude: latitude, longitude: longitude)
        return areas.features.first { $0.polygons.contains { areas.contains($0, x, y) } }?.area
    }

    /// Every place the map knows: one per 읍·면·동, and one per 시·군·구 with no 읍·면·동 (its `submunicipality` nil).
    public func everyPlace() -> [Place] {
        var municipalitiesByCode: [String: RegionLevel.Feature] = [:]
        for feature in municipalities.features { municipalitiesByCode[feature.area.code] = feature }
        var places: [Place] = []
        var withSubmunicipalities: Set<String> = []
        for feature in submunicipalities.features {
            let code = String(feature.area.code.prefix(5))
            guard let municipality = municipalitiesByCode[code], let province = provinces[municipality.province]
            else { continue }
            withSubmunicipalities.insert(code)
            places.append(Place(province: province, municipality: municipality.area, submunicipality: feature.area))
        }
        for feature in municipalities.features where !withSubmunicipalities.contains(feature.area.code) {
            guard let province = provinces[feature.province] else { continue }
            places.append(Place(province: province, municipality: feature.area, submunicipality: nil))
        }
        return places
    }

    /// Where the point is; nil outside every 시·군·구.
    public func place(latitude: Double, longitude: Double) -> Place? {
        guard latitude.isFinite, longitude.isFinite,
            let municipality = municipalities.feature(latitude: latitude, longitude: longitude),
            let province = provinces[municipality.province]
        else { return nil }
        let submunicipality = submunicipalities.feature(latitude: latitude, longitude: longitude)
        return Place(province: province, municipality: municipality.area, submunicipality: submunicipality?.area)
    }
}

/// Reads the borders file: varints, zigzag varints, length-prefixed UTF-8, and little-endian doubles.
struct RegionReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func take(_ count: Int) throws -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else { throw RegionMap.FormatError(description: "truncated") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            guard offset < bytes.count else { throw RegionMap.FormatError(description: "truncated") }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        throw RegionMap.FormatError(description: "a varint longer than 64 bits")
    }

    /// A count, at most the bytes left (every item takes one at least).
    mutating func count() throws -> Int {
        let value = try varint()
        guard value <= UInt64(bytes.count - offset) else { throw RegionMap.FormatError(description: "a count past the end") }
        return Int(value)
    }

    mutating func signed() throws -> Int32 {
        let value = try varint()
        let decoded = Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
        guard let narrow = Int32(exactly: decoded) else { throw RegionMap.FormatError(description: "out of range") }
        return narrow
    }

    mutating func text() throws -> String {
        guard let text = String(validating: try take(try count()), as: UTF8.self) else {
            throw RegionMap.FormatError(description: "a name that is not UTF-8")
        }
        return text
    }

    mutating func double() throws -> Double {
        let raw = try take(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Double(bitPattern: raw)
    }

    /// One level: its quantization, its arcs (delta-encoded, the first point absolute), its areas.
    mutating func level() throws -> RegionLevel {
        let (scaleX, scaleY, translateX, translateY) = (try double(), try double(), try double(), try double())
        // Quantized coordinates are divided by these: a zero, infinite or NaN one would make every lookup trap.
        guard [scaleX, scaleY].allSatisfy({ $0.isFinite && $0 > 1e-9 }), translateX.isFinite, translateY.isFinite
        else { throw RegionMap.FormatError(description: "a quantization that is not a positive scale") }
        let arcCount = try count()
        var xs: [Int32] = [], ys: [Int32] = [], arcStart: [Int32] = [0]
        arcStart.reserveCapacity(arcCount + 1)
        for _ in 0..<arcCount {
            var (x, y): (Int32, Int32) = (0, 0)
            for _ in 0..<(try count()) {
                let (dx, dy) = (try signed(), try signed())
                (x, y) = (x &+ dx, y &+ dy)
                xs.append(x)
                ys.append(y)
            }
            arcStart.append(Int32(xs.count))
        }
        var features: [RegionLevel.Feature] = []
        for _ in 0..<(try count()) {
            let (code, province, name, english) = (try text(), try text(), try text(), try text())
            var polygons: [[[Int32]]] = []
            var bounds = RegionLevel.Bounds()
            for _ in 0..<(try count()) {
                var rings: [[Int32]] = []
                for _ in 0..<(try count()) {
                    var ring: [Int32] = []
                    for _ in 0..<(try count()) {
                        let reference = try signed()
                        let arc = Int(reference < 0 ? ~reference : reference)
                        guard arc < arcCount else { throw RegionMap.FormatError(description: "an arc that is not there") }
                        for index in Int(arcStart[arc])..<Int(arcStart[arc + 1]) {
                            bounds.minX = min(bounds.minX, xs[index])
                            bounds.maxX = max(bounds.maxX, xs[index])
                            bounds.minY = min(bounds.minY, ys[index])
                            bounds.maxY = max(bounds.maxY, ys[index])
                        }
                        ring.append(reference)
                    }
                    rings.append(ring)
                }
                polygons.append(rings)
            }
            features.append(
                RegionLevel.Feature(
                    area: Area(code: code, name: name, englishName: english), province: province, polygons: polygons,
                    bounds: bounds))
        }
        return RegionLevel(
            scaleX: scaleX, scaleY: scaleY, translateX: translateX, translateY: translateY, xs: xs, ys: ys,
            arcStart: arcStart, features: features, grid: Grid(features))
    }
}
