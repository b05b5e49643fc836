import Dongne
import Synchronization

/// `/where`, `/posting` and `/nearby`: where the user is, what follows from it, and what the REPL says when it
/// changes.
///
/// The REPL follows the node's whereabouts for the whole session: it says once that no GPS answers (the node says
/// it once, until gpsd answers again), and when a GPS fix puts the user in a neighbourhood they were not in, it
/// offers that neighbourhood's channels once (each at most once per session).
final class WhereCommands: Sendable {
    /// How long the start waits for gpsd's first answer, so that what it says about the GPS is in the banner.
    static let firstAnswerWait: Duration = .seconds(3)

    private let node: Node
    private let console: any Console
    private let state = Mutex(State())

    private struct State {
        var following: Task<Void, Never>?
        /// The narrowest named neighbourhood last seen, to notice moves.
        var lastPlace: String?
        /// Neighbourhoods offered this session.
        var offered: Set<String> = []
        /// Whether the start said already that no GPS answers (the node's one notice of it is then not repeated).
        var saidUnavailable = false
    }

    init(node: Node, console: any Console) {
        self.node = node
        self.console = console
    }

    /// Waits (briefly) for gpsd's first answer, says where the user is when there is something to say, and
    /// starts following changes.
    func start() async {
        let updates = node.whereaboutsUpdates()
        let deadline = ContinuousClock.now + Self.firstAnswerWait
        // The node reports gpsd's first answer (or its absence) within the connection's own 2 s timeout.
        while node.whereabouts.gps == .connecting, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let now = node.whereabouts
        var gpsProblem: String?
        if case .unavailable(let reason) = now.gps { gpsProblem = reason }
        state.withLock {
            $0.lastPlace = now.placeName
            $0.saidUnavailable = gpsProblem != nil
        }
        if let gpsProblem { console.write(noGPS(gpsProblem, now)) }
        if now.position != nil { console.write(summary(now)) }
        let task = Task { [weak self] in
            for await update in updates { self?.take(update) }
        }
        state.withLock { $0.following = task }
    }

    /// Stops following.
    func close() {
        state.withLock { $0.following }?.cancel()
    }

    /// `/where`: the position, its source and age, the places it is in, the GPS, and the posting rule.
    func show() {
        let now = node.whereabouts
        console.write(summary(now))
        console.write(.notice("source: " + source(now)))
        console.write(.notice("posting: " + posting(now)))
        if !now.neighbourhoods.isEmpty {
            console.write(.notice("channels here: " + now.neighbourhoods.map(\.channel).joined(separator: " · ")))
        }
    }

    /// `/where LAT LON` or `/where forget`.
    func set(_ location: Location?) async throws {
        try await node.setLocation(location)
        let now = node.whereabouts
        state.withLock { $0.lastPlace = now.placeName }
        if location == nil, now.position == nil { return console.write(.notice("your position is forgotten")) }
        console.write(summary(now))
        if location != nil, now.position?.source == .gps {
            console.write(.notice("a GPS fix is used while there is one: yours is kept for when there is none"))
        }
    }

    /// `/posting RULE`.
    func setPosting(_ rule: PostingRule) async throws {
        try await node.setPostingRule(rule)
        console.write(.notice("posting: " + posting(node.whereabouts)))
    }

    /// `/nearby`: the channels for where the user is, with what this node knows of each.
    func nearby() throws {
        let now = node.whereabouts
        guard now.position != nil else {
            return console.write(.notice("where you are is not known: /where LAT LON sets it"))
        }
        if now.place == nil { console.write(.notice(outsideKorea(now))) }
        for channel in try node.nearbyChannels() {
            let people = channel.people == 1 ? "1 person" : "\(channel.people) people"
            let messages = channel.messages == 1 ? "1 message" : "\(channel.messages) messages"
            let text = "  \(VisibleText.channel(channel.neighbourhood.channel)) — \(people), \(messages)"
            console.write(
                ConsoleLine(
                    text: text, event: "nearby",
                    fields: [
                        "channel": channel.neighbourhood.channel, "level": Self.level(channel.neighbourhood.level),
                        "people": channel.people, "messages": channel.messages,
                    ]))
        }
        console.write(.notice("/join NAME joins one"))
    }

    private func take(_ update: WhereaboutsUpdate) {
        switch update {
        case .gpsUnavailable(let reason):
            let said = state.withLock { state in
                defer { state.saidUnavailable = false }
                return state.saidUnavailable
            }
            if !said { console.write(noGPS(reason, node.whereabouts)) }
        case .gpsAnswers:
            state.withLock { $0.saidUnavailable = false }
            console.write(.notice("the GPS answers again (gpsd)"))
        case .changed(let now): offerIfMoved(now)
        }
    }

    /// Offers a neighbourhood the GPS put the user in, once.
    private func offerIfMoved(_ now: WhereaboutsSnapshot) {
        let offer = state.withLock { state -> Bool in
            let place = now.placeName
            defer { state.lastPlace = place }
            guard let place, place != state.lastPlace, now.position?.source == .gps else { return false }
            return state.offered.insert(place).inserted
        }
        guard offer, let place = now.placeName else { return }
        console.write(
            ConsoleLine(
                text: "* you are now in \(VisibleText.channel(place)): /join \(place) (or /nearby for every channel here)",
                event: "moved", fields: fields(now)))
    }

    private func summary(_ now: WhereaboutsSnapshot) -> ConsoleLine {
        guard let position = now.position else {
            return ConsoleLine(
                text: "* where you are: not known — /where LAT LON sets it", event: "where", fields: fields(now))
        }
        let point = ConsoleLine.coordinates(position.location)
        let text =
            if let place = now.placeName {
                "* where you are: \(place) (\(point); \(Self.sourceName(position.source)), \(Self.age(now.positionAge ?? 0)))"
            } else {
                "* where you are: \(point) (\(Self.sourceName(position.source)), \(Self.age(now.positionAge ?? 0))) — "
                    + outsideKorea(now)
            }
        return ConsoleLine(text: text, event: "where", fields: fields(now))
    }

    private func outsideKorea(_ now: WhereaboutsSnapshot) -> String {
        if let problem = now.bordersUnavailable { return "no place names (\(problem)): only geohash channels" }
        return "outside South Korea's borders: only coordinates and geohash channels are available"
    }

    private func noGPS(_ reason: String, _ now: WhereaboutsSnapshot) -> ConsoleLine {
        let then =
            if let user = now.userSet {
                "using the position you set (\(ConsoleLine.coordinates(user.location)))"
            } else {
                "/where LAT LON says where you are"
            }
        return ConsoleLine(
            text: "* no GPS: \(reason); \(then)", event: "gps", fields: ["status": "unavailable", "reason": reason])
    }

    private func source(_ now: WhereaboutsSnapshot) -> String {
        let gps: String =
            switch now.gps {
            case .notUsed: "GPS not asked (--no-gps)"
            case .connecting: "GPS: connecting to gpsd"
            case .unavailable(let reason): "GPS: \(reason)"
            case .noFix(let last): "GPS: no fix" + (last.map { ", the last one \(Self.age(since: $0, at: now.at))" } ?? " yet")
            case .fix(let at): "GPS: a fix \(Self.age(since: at, at: now.at))"
            case .stale(let last): "GPS: the last fix is \(Self.age(since: last, at: now.at)), too old to use"
            }
        guard let user = now.userSet else { return gps + "; no position set by you" }
        return gps + "; set by you \(Self.age(since: user.since, at: now.at)): \(ConsoleLine.coordinates(user.location))"
    }

    private func posting(_ now: WhereaboutsSnapshot) -> String {
        switch now.postingRule {
        case .anywhere: return "in any channel (/posting neighbourhood keeps you to where you are)"
        case .ownNeighbourhood:
            guard let allowed = now.mayPostIn else {
                return "in the channels of where you are, once that is known; until then in any"
            }
            return "in the channels of where you are (" + allowed.joined(separator: ", ")
                + ") and in channels not named after a place (/posting anywhere lifts it)"
        }
    }

    private func fields(_ now: WhereaboutsSnapshot) -> [String: any Sendable] {
        var fields: [String: any Sendable] = ["posting": now.postingRule.rawValue]
        if let position = now.position {
            fields["latitude"] = position.location.latitude
            fields["longitude"] = position.location.longitude
            fields["source"] = position.source.rawValue
            fields["age"] = Int(clamping: now.positionAge ?? 0)
        }
        if let place = now.place {
            fields["province"] = place.province.name
            fields["municipality"] = place.municipality.name
            if let submunicipality = place.submunicipality { fields["submunicipality"] = submunicipality.name }
        }
        fields["channels"] = now.neighbourhoods.map(\.channel)
        if let allowed = now.mayPostIn { fields["mayPostIn"] = allowed }
        return fields
    }

    private static func sourceName(_ source: Whereabouts.Source) -> String {
        switch source {
        case .gps: "GPS"
        case .user: "set by you"
        }
    }

    private static func level(_ level: Neighbourhood.Level) -> String {
        switch level {
        case .province: "province"
        case .municipality: "municipality"
        case .submunicipality: "submunicipality"
        case .geohash(let precision): "geohash\(precision)"
        }
    }

    /// The age of what happened `since`, at `now`; "just now" when the clock went back in between.
    static func age(since: UInt64, at now: UInt64) -> String {
        age(now >= since ? now - since : 0)
    }

    /// An age as people say it: "just now", "40 s ago", "5 min ago", "3 h ago", "2 days ago".
    static func age(_ milliseconds: UInt64) -> String {
        let seconds = milliseconds / 1_000
        switch seconds {
        case ..<5: return "just now"
        case ..<60: return "\(seconds) s ago"
        case ..<3_600: return "\(seconds / 60) min ago"
        case ..<86_400: return "\(seconds / 3_600) h ago"
        default: return "\(seconds / 86_400) days ago"
        }
    }
}

extension Node {
    /// A location message's place and distance from the user, for its line.
    func describeLocation(of content: MessageContent) -> LocationDescription? {
        guard case .location(let point) = content else { return nil }
        return describe(point)
    }
}
