import Glibc  // sin, cos and asin only

/// Distances on the Earth, as a sphere of the mean radius (IUGG, 6,371,008.8 m): within 0.5% of the ellipsoid's,
/// which is finer than a phone's fix and than "1.2 km" shows.
public enum GreatCircle {
    /// The Earth's mean radius in metres.
    public static let earthRadius = 6_371_008.8

    /// The distance in metres between two points, by the haversine formula (stable for short distances).
    public static func distance(from start: Location, to end: Location) -> Double {
        let radians = Double.pi / 180
        let (phi1, phi2) = (start.latitude * radians, end.latitude * radians)
        let deltaPhi = (end.latitude - start.latitude) * radians
        let deltaLambda = (end.longitude - start.longitude) * radians
        let a = sinSquared(deltaPhi / 2) + cos(phi1) * cos(phi2) * sinSquared(deltaLambda / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }

    /// A distance as people say it: "350 m" under a kilometre, "1.2 km" under ten, "24 km" beyond.
    public static func spoken(metres: Double) -> String {
        // Two points on Earth are at most 20,038 km apart: anything far beyond is not a distance.
        guard metres.isFinite, metres >= 0, metres < 1e9 else { return "?" }
        if metres < 995 { return "\(Int((metres / 10).rounded()) * 10) m" }
        if metres < 9_950 {
            let tenths = Int((metres / 100).rounded())
            return "\(tenths / 10).\(tenths % 10) km"
        }
        return "\(Int((metres / 1_000).rounded())) km"
    }

    private static func sinSquared(_ x: Double) -> Double {
        let s = sin(x)
        return s * s
    }
}
