import Dongne
import Foundation

/// One thing the REPL says, in both of its forms: a line for people, and a JSON object for `--json`.
struct ConsoleLine: Sendable, Equatable {
    /// The line a person reads.
    let text: String
    /// The same, as one JSON object on one line.
    let json: String

    /// A line with a JSON object of `event` and `fields` (keys sorted, so output is stable).
    init(text: String, event: String, fields: [String: any Sendable] = [:]) {
        self.text = text
        var object: [String: Any] = fields
        object["event"] = event
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        self.json = data.map { String(decoding: $0, as: UTF8.self) } ?? #"{"event":"error","message":"unencodable"}"#
    }

    static func notice(_ text: String) -> ConsoleLine {
        ConsoleLine(text: "* " + text, event: "info", fields: ["message": text])
    }

    static func error(_ text: String) -> ConsoleLine {
        ConsoleLine(text: "! " + text, event: "error", fields: ["message": text])
    }

    /// A message, as `#REF HH:MM NAME (FINGERPRINT): CONTENT`.
    static func message(_ message: MessageSnapshot, ref: Int, channel: String, fingerprint: String) -> ConsoleLine {
        var fields: [String: any Sendable] = [
            "channel": channel, "id": message.id.hex, "ref": ref, "author": Hex.encode(message.author.bytes),
            "fingerprint": fingerprint, "name": message.senderName, "created": message.created,
            "reportCount": message.reportCount, "pending": message.metadata.hasPendingWrites,
        ]
        let body: String
        switch message.content {
        case .text(let text):
            fields["text"] = text
            body = text
        case .location(let point):
            fields["latitude"] = point.latitude
            fields["longitude"] = point.longitude
            body = "📍 \(coordinates(point)) \(openStreetMapLink(point))"
        case .photo(let hash):
            fields["photo"] = Hex.encode(hash.bytes)
            body = "[photo \(hash)]"
        }
        let text = "#\(ref) \(clockTime(message.created)) \(message.senderName) (\(fingerprint)): \(body)"
        return ConsoleLine(text: text, event: "message", fields: fields)
    }

    static func removed(_ message: MessageSnapshot, ref: Int) -> ConsoleLine {
        ConsoleLine(text: "* #\(ref) is hidden", event: "removed", fields: ["id": message.id.hex, "ref": ref])
    }

    static func reported(_ message: MessageSnapshot, ref: Int) -> ConsoleLine {
        let noun = message.reportCount == 1 ? "report" : "reports"
        return ConsoleLine(
            text: "* #\(ref) has \(message.reportCount) \(noun)", event: "modified",
            fields: [
                "id": message.id.hex, "ref": ref, "reportCount": message.reportCount, "isActive": message.isActive,
            ])
    }

    static func coordinates(_ point: Location) -> String {
        String(format: "%.5f, %.5f", point.latitude, point.longitude)
    }

    static func openStreetMapLink(_ point: Location) -> String {
        let latitude = String(format: "%.5f", point.latitude), longitude = String(format: "%.5f", point.longitude)
        return "https://www.openstreetmap.org/?mlat=\(latitude)&mlon=\(longitude)#map=16/\(latitude)/\(longitude)"
    }

    /// Hours and minutes in the local time zone.
    static func clockTime(_ created: UInt64) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        formatter.timeZone = .current
        return formatter.string(from: Date(timeIntervalSince1970: Double(created) / 1_000))
    }
}
