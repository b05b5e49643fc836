import Foundation

/// What one line of gpsd's JSON protocol (gpsd_json(5)) says about the position: a TPV ("time-position-velocity")
/// report with a 2D or 3D fix is a position; one with mode 0 or 1 says there is none. Every other class (VERSION,
/// DEVICES, WATCH, SKY, …) and anything not JSON says nothing.
enum GPSDReport {
    /// The `?WATCH` command that asks gpsd to stream JSON reports from every device.
    static let watch = Array(#"?WATCH={"enable":true,"json":true};"#.utf8) + [0x0A]

    /// The longest line kept: gpsd's longest reports (SKY with every satellite) are a few KiB.
    static let maximumLineBytes = 64 << 10

    private struct Report: Decodable {
        let `class`: String
        let mode: Int?
        let lat: Double?
        let lon: Double?
    }

    /// What one line is.
    enum Reading: Equatable {
        /// A gpsd report, with what it says of the position (nil: nothing, as VERSION or SKY).
        case report(Whereabouts.Event?)
        /// Not a gpsd report: not JSON, or JSON without a `class`.
        case notAReport
    }

    /// What `line` is.
    static func reading(fromLine line: some Collection<UInt8>) -> Reading {
        guard let report = try? JSONDecoder().decode(Report.self, from: Data(line)) else { return .notAReport }
        guard report.class == "TPV" else { return .report(nil) }
        guard let mode = report.mode, mode >= 2, let latitude = report.lat, let longitude = report.lon,
            (-90.0...90.0).contains(latitude), (-180.0...180.0).contains(longitude)
        else { return .report(.gpsNoFix) }
        return .report(.gpsFix(Location(latitude: latitude, longitude: longitude)))
    }
}
