import Dongne
import Foundation

/// One thing the REPL says, in its three forms: a line for people, the same with colours for a terminal, and
/// a JSON object for `--json`.
struct ConsoleLine: Sendable, Equatable {
    /// The line a person reads (several lines for a multi-line message, each continuation marked).
    let text: String
    /// The same, with ANSI colours.
    let colored: String
    /// What the JSON form says: the event's name.
    let event: String
    /// And its fields.
    let fields: [String: any Sendable]
    /// The JSON form as another process made it (a REPL attached to a node gets its lines made).
    private let madeJSON: String?

    /// A line with a JSON object of `event` and `fields`.
    init(text: String, colored: String? = nil, event: String, fields: [String: any Sendable] = [:]) {
        self.text = text
        self.colored = colored ?? text
        self.event = event
        self.fields = fields
        self.madeJSON = nil
    }

    /// A line made elsewhere, in the forms it came in (a missing one is the plain text).
    init(madeElsewhere text: String, colored: String?, json: String?) {
        self.text = text
        self.colored = colored ?? text
        self.event = "line"
        self.fields = [:]
        self.madeJSON = json
    }

    /// The line as one JSON object on one line, keys sorted so that output is stable. Made when it is written,
    /// on the output's thread: Foundation sorts the keys by a locale's rules, which on the thread that shows
    /// messages took a quarter of its time under a flood.
    var json: String {
        if let madeJSON { return madeJSON }
        var object: [String: Any] = fields
        object["event"] = event
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? #"{"event":"error","message":"unencodable"}"#
    }

    /// Lines are equal when every form of them is.
    static func == (lhs: ConsoleLine, rhs: ConsoleLine) -> Bool {
        lhs.text == rhs.text && lhs.colored == rhs.colored && lhs.json == rhs.json
    }

    static func notice(_ text: String) -> ConsoleLine {
        ConsoleLine(text: "* " + text, colored: Palette.dim("* " + text), event: "info", fields: ["message": text])
    }

    /// An error in words; `code` (a protocol rule such as `text-too-long`) goes into the JSON form only.
    static func error(_ text: String, code: String? = nil) -> ConsoleLine {
        var fields: [String: any Sendable] = ["message": text]
        if let code { fields["code"] = code }
        return ConsoleLine(text: "! " + text, colored: Palette.error("! " + text), event: "error", fields: fields)
    }

    /// What a message looks like on screen, besides the message itself.
    struct MessageStyle {
        /// The reference the REPL gave it (without `#`).
        var ref: String
        /// The channel's name.
        var channel: String
        /// The author's fingerprint, as long as it must be to tell them apart from the others known.
        var fingerprint: String
        /// Today on the local clock (dates are shown for other days).
        var today: LocalTime?
        /// Whether the message mentions the user.
        var mentionsYou = false
        /// A location message's place and distance from the user.
        var location: LocationDescription? = nil
    }

    /// A message, as `#REF HH:MM NAME (FINGERPRINT): CONTENT`, its other lines indented and marked.
    static func message(_ message: MessageSnapshot, _ style: MessageStyle) -> ConsoleLine {
        var fields: [String: any Sendable] = [
            "channel": style.channel, "id": message.id.hex, "ref": style.ref, "author": Hex.encode(message.author.bytes),
            "fingerprint": message.author.fingerprint.full, "shownFingerprint": style.fingerprint,
            "name": message.senderName, "created": message.created,
            "reportCount": message.reportCount, "pending": message.metadata.hasPendingWrites,
        ]
        let body: String
        switch message.content {
        case .text(let text):
            fields["text"] = text
            body = VisibleText.body(text)
        case .location(let point):
            let words = style.location ?? LocationDescription(location: point, place: nil, distance: nil)
            fields.merge(locationFields(words)) { $1 }
            body = locationBody(words)
        case .photo(let hash):
            fields["photo"] = Hex.encode(hash.bytes)
            if let info = message.photo?.info {
                fields["width"] = info.width
                fields["height"] = info.height
                fields["size"] = info.size
                fields["mediaType"] = info.mediaType
            }
            body = "📷 " + (message.photo?.info.map(photoFacts) ?? "photo \(hash)")
        }
        let time = Timestamp.text(message.created, today: style.today)
        let name = VisibleText.name(message.senderName)
        let lines = VisibleText.lines(body)
        let text = "#\(style.ref) \(time) \(name) (\(style.fingerprint)): " + lines.joined(separator: "\n")
        var colored =
            Palette.dim("#\(style.ref) \(time)") + " " + Palette.name(name, of: message.author) + " "
            + Palette.dim("(\(style.fingerprint))") + ": "
        colored += style.mentionsYou ? lines.map(Palette.bold).joined(separator: "\n") : lines.joined(separator: "\n")
        return ConsoleLine(text: text, colored: colored, event: "message", fields: fields)
    }

    /// A line of `/hidden`, or what `/show` says after the message: whether and why a message is hidden.
    static func hidden(_ moderation: Moderation, ref: String, listing: Bool) -> ConsoleLine {
        let message = moderation.message
        let why = HiddenReasons.words(moderation)
        let who = "\(VisibleText.name(message.senderName)) (\(message.author.fingerprint.short))"
        let text = listing ? "* #\(ref) by \(who) is hidden: \(why) (/show #\(ref) shows it)" : "* #\(ref): \(why)"
        return ConsoleLine(
            text: text, colored: Palette.dim(text), event: "hidden",
            fields: [
                "id": message.id.hex, "ref": ref, "author": Hex.encode(message.author.bytes),
                "fingerprint": message.author.fingerprint.full, "name": message.senderName, "why": why,
                "isHidden": moderation.isHidden,
            ])
    }

    /// A shown message that is now hidden, and why, if known.
    static func removed(_ message: MessageSnapshot, ref: String, why: String? = nil) -> ConsoleLine {
        let text = "* #\(ref) is hidden" + (why.map { ": \($0)" } ?? "")
        var fields: [String: any Sendable] = ["id": message.id.hex, "ref": ref]
        if let why { fields["why"] = why }
        return ConsoleLine(text: text, colored: Palette.dim(text), event: "removed", fields: fields)
    }

    static func reported(_ message: MessageSnapshot, ref: String) -> ConsoleLine {
        let noun = message.reportCount == 1 ? "report" : "reports"
        let text = "* #\(ref) has \(message.reportCount) \(noun)"
        return ConsoleLine(
            text: text, colored: Palette.dim(text), event: "modified",
            fields: [
                "id": message.id.hex, "ref": ref, "reportCount": message.reportCount, "isActive": message.isActive,
            ])
    }

    /// A message of the user's was stored by another node: it is no longer pending (`--json` only says so).
    static func acknowledged(_ message: MessageSnapshot, ref: String) -> ConsoleLine {
        ConsoleLine(
            text: "* #\(ref) was stored by a peer", event: "acknowledged",
            fields: ["id": message.id.hex, "ref": ref, "pending": false])
    }

    /// A location as people read it: `📍 사직동, 종로구, 서울특별시 · 1.2 km · 37.57634, 126.96880 LINK`.
    static func locationBody(_ words: LocationDescription) -> String {
        let parts = [words.placeName, words.distance.map { $0 < 10 ? "here" : GreatCircle.spoken(metres: $0) + " from you" }].compactMap { $0 }
        return "📍 " + (parts.isEmpty ? "" : parts.joined(separator: " · ") + " · ")
            + "\(coordinates(words.location)) \(words.mapLink)"
    }

    /// The JSON form of a location: coordinates, and the place and distance when known.
    static func locationFields(_ words: LocationDescription) -> [String: any Sendable] {
        var fields: [String: any Sendable] = [
            "latitude": words.location.latitude, "longitude": words.location.longitude,
        ]
        if let place = words.place {
            fields["province"] = place.province.name
            fields["municipality"] = place.municipality.name
            if let submunicipality = place.submunicipality { fields["submunicipality"] = submunicipality.name }
        }
        if let distance = words.distance, distance.isFinite, abs(distance) < 1e9 {
            fields["distance"] = Int(distance.rounded())
        }
        return fields
    }

    static func coordinates(_ point: Location) -> String {
        String(format: "%.5f, %.5f", point.latitude, point.longitude)
    }
}
