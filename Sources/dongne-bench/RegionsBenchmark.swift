@_spi(Benchmark) import DongneRegions
import Foundation

/// `dongne-bench regions`: offline reverse geocoding (`Sources/DongneRegions/korea-regions`), beside a brute force over the same
/// data in the same run:
///
/// - the time to load the borders (target < 50 ms) and the resident memory they take (target < 20 MiB);
/// - lookups per second at each level through the grid (target: microseconds), against a brute force that tries
///   every polygon of the level edge by edge, on the same points on land.
enum RegionsBenchmark {
    static func run() throws -> Bool {
        let path = FileManager.default.currentDirectoryPath + "/Sources/DongneRegions/korea-regions/regions.bin"
        // The first load's growth of resident memory, before any other load could leave freed pages to reuse.
        let before = ListenerBenchmark.residentMemoryMiB()
        let map = try RegionMap(contentsOf: path)
        let resident = ListenerBenchmark.residentMemoryMiB() - before
        var loads: [Double] = []
        for _ in 0..<5 {
            let start = ContinuousClock.now
            _ = try RegionMap(contentsOf: path)
            loads.append(Measure.seconds(ContinuousClock.now - start))
        }
        let points = landPoints(map, count: 20_000)
        Measure.report("points on land", "\(points.count)")
        var met = true
        for (level, name) in [(0, "시·군·구"), (1, "읍·면·동")] {
            var found = 0
            let grid = Measure.rateSync(count: points.count) {
                for (latitude, longitude) in points where map.area(level: level, latitude: latitude, longitude: longitude) != nil {
                    found += 1
                }
            }
            let sample = Array(points.prefix(200))
            let brute = Measure.rateSync(count: sample.count) {
                for (latitude, longitude) in sample
                where map.areaTryingEveryArea(level: level, latitude: latitude, longitude: longitude) != nil {
                    found += 1
                }
            }
            Measure.report("\(name): grid", Measure.perSecond(grid) + String(format: "  (%.1f µs each)", 1e6 / grid))
            Measure.report("\(name): every polygon tried", Measure.perSecond(brute))
            Measure.report("\(name): grid / every polygon", String(format: "%.0f", grid / brute))
            met = Measure.ratio("\(name): µs per lookup", 1e6 / grid, atMost: 100, unit: " µs") && met
        }
        let all = Measure.rateSync(count: points.count) {
            for (latitude, longitude) in points { _ = map.place(latitude: latitude, longitude: longitude) }
        }
        Measure.report("all three levels (place)", Measure.perSecond(all) + String(format: "  (%.1f µs each)", 1e6 / all))
        let load = loads.sorted()[loads.count / 2] * 1_000
        met = Measure.ratio("load, median of 5", load, atMost: 50, unit: " ms") && met
        met = Measure.ratio("resident memory of the loaded map", resident, atMost: 20, unit: " MiB") && met
        return met
    }

    /// Random points in Korea's box that fall in some 시·군·구.
    private static func landPoints(_ map: RegionMap, count: Int) -> [(Double, Double)] {
        var generator = SystemRandomNumberGenerator()
        var points: [(Double, Double)] = []
        while points.count < count {
            let point = (Double.random(in: 33.1...38.6, using: &generator), Double.random(in: 124.6...131.0, using: &generator))
            if map.place(latitude: point.0, longitude: point.1) != nil { points.append(point) }
        }
        return points
    }
}
