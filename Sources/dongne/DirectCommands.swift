import Dongne
import Synchronization

/// `/dm`, `/dms` and `/receipts`: the REPL's direct messages.
///
/// A conversation the user opens (`/dm USER`) or writes to (`/dm USER TEXT`) has a live listener on its latest
/// messages for the rest of the session: while the user looks at it, what arrives prints and is marked read (the
/// read flag is "shown on the recipient's screen"); the user's own messages print `…` until another node stored
/// them, then a line when they are stored (`✓`) and when they are read. One more listener, on the conversation
/// list, prints one notice line per direct message that arrives while the user looks elsewhere, and keeps the
/// unread count for the prompt. Locking: this type's state is never held while the session's is taken.
final class DirectCommands: Sendable {
    /// How many of a conversation's latest messages `/dm USER` shows.
    static let pageSize = 20

    private let node: Node
    private let console: any Console
    private let today: @Sendable () -> LocalTime?
    private let state = Mutex(State())

    private struct State {
        /// The conversation the user looks at, if any.
        var viewing: PublicKey?
        var feeds: [PublicKey: Feed] = [:]
        var refs = MessageRefs()
        /// Unread messages per correspondent, from the conversation list.
        var unread: [PublicKey: Int] = [:]
        /// The latest message of each conversation as last seen by the list, not to announce one twice.
        var latestSeen: [PublicKey: DocumentID] = [:]
        var list: ListenerRegistration?
        var listStarted = false
        var promptChanged: (@Sendable () -> Void)?
    }

    /// A followed conversation: its listener, and the state each of the user's messages was last shown in.
    private struct Feed {
        var registration: ListenerRegistration?
        var messages: [DirectMessageSnapshot] = []
        var status: [DocumentID: Status] = [:]
        var first: CheckedContinuation<Void, Never>?
        var isReady = false
    }

    /// How far a sent message got, in order: a status only moves forward.
    private enum Status: Int, Comparable {
        case pending, stored, read

        static func < (lhs: Status, rhs: Status) -> Bool { lhs.rawValue < rhs.rawValue }

        init(_ message: DirectMessageSnapshot) {
            self = message.isRead ? .read : message.metadata.hasPendingWrites ? .pending : .stored
        }

        var mark: String {
            switch self {
            case .pending: "…"
            case .stored: "✓"
            case .read: "✓ read"
            }
        }
    }

    init(node: Node, console: any Console, today: @escaping @Sendable () -> LocalTime?) {
        self.node = node
        self.console = console
        self.today = today
    }

    /// Starts the conversation list's listener; `promptChanged` is called (never with this type's lock held)
    /// whenever the unread count or the conversation looked at changes.
    func start(promptChanged: @escaping @Sendable () -> Void) {
        state.withLock { $0.promptChanged = promptChanged }
        let registration = node.conversations.addSnapshotListener { [weak self] snapshot, error in
            guard let snapshot else {
                self?.console.write(.error("direct messages stopped: \(error.map { "\($0)" } ?? "")"))
                return
            }
            self?.listChanged(snapshot)
        }
        state.withLock { $0.list = registration }
    }

    /// Stops every listener.
    func close() {
        let registrations = state.withLock { state in
            defer {
                state.feeds.removeAll()
                state.list = nil
            }
            return state.feeds.values.compactMap(\.registration) + (state.list.map { [$0] } ?? [])
        }
        registrations.forEach { $0.remove() }
    }

    // MARK: Commands

    /// `/dm USER TEXT`: sends without changing what the user looks at.
    func send(_ text: String, to correspondent: PublicKey) async throws {
        await follow(correspondent)
        let sent = try await node.conversation(with: correspondent).send(text)
        let shown = state.withLock { state -> DirectMessageSnapshot? in
            guard state.viewing != correspondent else { return nil }
            // The line shows the furthest the message got: the listener may have seen it stored, or read, after
            // `send` took its snapshot. Later snapshots that differ from what it shows get a line of their own.
            let seen = state.feeds[correspondent]?.messages.first { $0.id == sent.id }
            let shown = seen.map { Status($0) > Status(sent) ? $0 : sent } ?? sent
            state.feeds[correspondent]?.status[sent.id] = Status(shown)
            return shown
        }
        if let shown { write([shown], live: true) }
    }

    /// A line typed while looking at a conversation.
    func say(_ text: String) async throws {
        guard let correspondent = viewing else { throw CommandError("look at a conversation first: /dm USER") }
        try await node.conversation(with: correspondent).send(text)
    }

    /// `/photo PATH` while looking at a conversation: sealed for the correspondent alone, with a line per step.
    func send(photo path: String) async throws {
        guard let correspondent = viewing else { throw CommandError("look at a conversation first: /dm USER") }
        try await node.conversation(with: correspondent).send(photo: path) { [console] step in
            console.write(.photoSending(step))
        }
    }

    /// The photo of the direct message `ref` names, if it is one shown in this session: the plain photo once
    /// opened (what `/view` and `/save` take), else the sealed one's name; with a caption saying whose it is.
    /// Nil for a reference of no direct message (it may be a channel's).
    func photo(_ ref: String) throws -> (photo: PhotoSnapshot, caption: String)? {
        let found = state.withLock { state -> (DocumentID, DirectMessageSnapshot?)? in
            guard case .success(let id) = state.refs.message(ref) else { return nil }
            return (id, state.feeds.values.lazy.flatMap(\.messages).first { $0.id == id })
        }
        guard let (id, message) = found else { return nil }
        guard let message, case .photo = message.content, let photo = message.photo else {
            throw CommandError("#\(state.withLock { $0.refs.ref(for: id) }) is not a photo")
        }
        let other = displayName(of: message.correspondent)
        let whose = message.isOutgoing ? "your photo to \(other)" : "a photo from \(other), to you alone"
        return (photo, whose)
    }

    /// `/location` while looking at a conversation.
    func send(location: Location) async throws {
        guard let correspondent = viewing else { throw CommandError("look at a conversation first: /dm USER") }
        try await node.conversation(with: correspondent).send(location: location)
    }

    /// `/dm USER`: looks at the conversation, its latest messages first.
    func view(_ correspondent: PublicKey) async {
        await follow(correspondent)
        let (messages, changed) = state.withLock { state in
            state.viewing = correspondent
            return (Array((state.feeds[correspondent]?.messages ?? []).suffix(Self.pageSize)), state.promptChanged)
        }
        let name = displayName(of: correspondent)
        console.write(
            ConsoleLine(
                text: "* talking with \(name): what you type goes to them (/join NAME goes back to a channel)",
                event: "direct-view", fields: person(correspondent)))
        if messages.isEmpty { console.write(.notice("no messages with \(name) yet")) }
        write(messages, live: false)
        changed?()
    }

    /// The user went back to a channel.
    func stopViewing() {
        let changed = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.viewing != nil else { return nil }
            state.viewing = nil
            return state.promptChanged
        }
        changed?()
    }

    /// The conversation looked at, if any.
    var viewing: PublicKey? { state.withLock { $0.viewing } }

    /// `/dms`: every conversation, latest first, with what is unread.
    func list() async throws {
        let conversations = try await node.conversations.getDocuments().documents
        if conversations.isEmpty { console.write(.notice("no direct messages yet (/dm USER TEXT writes one)")) }
        for conversation in conversations {
            let name = displayName(of: conversation.correspondent)
            let unread = conversation.unreadCount > 0 ? "\(conversation.unreadCount) unread" : "all read"
            let who = conversation.latest.isOutgoing ? "you" : "they"
            let latest = conversation.latest
            let text = "* \(name): \(unread); last, \(who): \(Self.preview(latest.content, photo: latest.photo))"
            console.write(
                ConsoleLine(
                    text: text, event: "conversation",
                    fields: person(conversation.correspondent).merging([
                        "unread": conversation.unreadCount, "latest": conversation.latest.id.hex,
                    ]) { $1 }))
        }
    }

    /// `/receipts on|off`.
    func setReceipts(_ on: Bool) async throws {
        try await node.setSendsReadReceipts(on)
        console.write(
            .notice(on ? "read receipts on: people see when you read their messages" : "read receipts off: nobody learns when you read their messages"))
    }

    /// What the prompt shows: the conversation looked at, and the number of unread direct messages.
    func promptParts() -> (viewing: String?, unread: Int) {
        let (viewing, unread) = state.withLock { state in
            (state.viewing, state.unread.filter { $0.key != state.viewing }.values.reduce(0, +))
        }
        return (viewing.map { "→ " + displayName(of: $0) }, unread)
    }

    // MARK: Listeners

    /// Starts a conversation's listener and waits for its first snapshot (once per conversation).
    private func follow(_ correspondent: PublicKey) async {
        let isNew = state.withLock { state -> Bool in
            guard state.feeds[correspondent] == nil else { return false }
            state.feeds[correspondent] = Feed()
            return true
        }
        guard isNew else { return await firstSnapshot(of: correspondent) }
        let query = node.conversation(with: correspondent).messages.limit(toLast: Self.pageSize * 5)
        let registration = query.addSnapshotListener(includeMetadataChanges: true) { [weak self] snapshot, error in
            self?.received(snapshot, error, from: correspondent)
        }
        state.withLock { $0.feeds[correspondent]?.registration = registration }
        await firstSnapshot(of: correspondent)
    }

    private func firstSnapshot(of correspondent: PublicKey) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                guard state.feeds[correspondent]?.isReady == false else { return true }
                state.feeds[correspondent]?.first = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func received(
        _ snapshot: QuerySnapshot<DirectMessageSnapshot>?, _ error: (any Error)?, from correspondent: PublicKey
    ) {
        guard let snapshot else {
            console.write(.error("listening stopped: \(error.map { "\($0)" } ?? "")"))
            return
        }
        let (waiting, fresh, changes, viewing, arrivedPhotos) = state.withLock { state in
            guard var feed = state.feeds[correspondent] else {
                return (
                    nil as CheckedContinuation<Void, Never>?, [DirectMessageSnapshot](),
                    [(DirectMessageSnapshot, Status)](), false, [(DirectMessageSnapshot, String)]()
                )
            }
            let wasReady = feed.isReady
            let known = Set(feed.messages.map(\.id))
            var changes: [(DirectMessageSnapshot, Status)] = []
            for message in snapshot.documents where message.isOutgoing {
                let now = Status(message)
                if let before = feed.status[message.id], before != now { changes.append((message, now)) }
                feed.status[message.id] = now
            }
            let before = Dictionary(feed.messages.map { ($0.id, $0.photo?.availability) }) { first, _ in first }
            let arrivedPhotos = snapshot.documents.filter { message in
                !message.isOutgoing && message.photo?.availability == .available
                    && before[message.id].map { $0 != .available } == true
            }
            feed.messages = snapshot.documents
            let fresh = wasReady ? snapshot.documents.filter { !known.contains($0.id) } : []
            let waiting = feed.first
            (feed.first, feed.isReady) = (nil, true)
            state.feeds[correspondent] = feed
            let photos = arrivedPhotos.map { ($0, state.refs.ref(for: $0.id)) }
            return (waiting, fresh, changes, state.viewing == correspondent, photos)
        }
        waiting?.resume()
        if viewing { write(fresh, live: true) }
        for (message, status) in changes { writeStatus(message, status) }
        // A photo opened after its message showed: one line, wherever the user looks (the message was announced).
        for (message, ref) in arrivedPhotos where !fresh.contains(where: { $0.id == message.id }) {
            if let photo = message.photo { console.write(.photoArrived(ref: ref, photo: photo)) }
        }
    }

    private func listChanged(_ snapshot: QuerySnapshot<ConversationSnapshot>) {
        let (announce, changed) = state.withLock { state in
            var announce: [ConversationSnapshot] = []
            for conversation in snapshot.documents {
                state.unread[conversation.correspondent] = conversation.unreadCount
                let latest = conversation.latest
                defer { state.latestSeen[conversation.correspondent] = latest.id }
                // The first snapshot announces what is unread already (it came while no REPL looked, or in the
                // moment between the node's start and this listener); later ones, what is new.
                let new = state.listStarted ? state.latestSeen[conversation.correspondent] != latest.id : conversation.unreadCount > 0
                guard new, !latest.isOutgoing, !latest.isRead, state.viewing != conversation.correspondent else { continue }
                announce.append(conversation)
            }
            let shown = Set(snapshot.documents.map(\.correspondent))
            state.unread = state.unread.filter { shown.contains($0.key) }
            state.listStarted = true
            return (announce, state.promptChanged)
        }
        for conversation in announce {
            let name = displayName(of: conversation.correspondent)
            let command = "/dm \(Self.command(for: conversation))"
            let text =
                if case .photo = conversation.latest.content {
                    "* direct photo from \(name) (\(command) to see it)"
                } else {
                    "* direct message from \(name) (\(command) to read it)"
                }
            console.write(
                ConsoleLine(
                    text: text, colored: Palette.bold(text), event: "direct-notice",
                    fields: person(conversation.correspondent).merging(["unread": conversation.unreadCount]) { $1 }))
        }
        changed?()
    }

    // MARK: Lines

    /// Prints messages of one conversation; received ones printed while the user looks at it are read.
    private func write(_ messages: [DirectMessageSnapshot], live: Bool) {
        guard !messages.isEmpty else { return }
        let today = self.today()
        var read: [DocumentID] = []
        for message in messages {
            let ref = state.withLock { $0.refs.ref(for: message.id) }
            console.write(line(for: message, ref: ref, today: today))
            if !message.isOutgoing && !message.isRead { read.append(message.id) }
        }
        guard let correspondent = messages.first?.correspondent, !read.isEmpty else { return }
        let conversation = node.conversation(with: correspondent)
        Task { [console] in
            do { try await conversation.markRead(read) } catch { console.write(Explanation.line(for: error)) }
        }
    }

    private func line(for message: DirectMessageSnapshot, ref: String, today: LocalTime?) -> ConsoleLine {
        let time = Timestamp.text(message.created, today: today)
        let other = displayName(of: message.correspondent)
        let body = Self.body(message.content, photo: message.photo, location: node.describeLocation(of: message.content))
        let status = message.isOutgoing ? " " + Status(message).mark : ""
        let who = message.isOutgoing ? "you → \(other)" : "\(other) → you"
        var fields: [String: any Sendable] = [
            "id": message.id.hex, "ref": ref, "author": Hex.encode(message.author.bytes),
            "fingerprint": message.author.fingerprint.full, "recipient": Hex.encode(message.recipient.bytes),
            "recipientFingerprint": message.recipient.fingerprint.full, "outgoing": message.isOutgoing,
            "pending": message.metadata.hasPendingWrites, "read": message.isRead, "created": message.created,
        ]
        switch message.content {
        case .text(let text): fields["text"] = text
        case .location(let point):
            let words = node.describeLocation(of: message.content) ?? LocationDescription(location: point, place: nil, distance: nil)
            fields.merge(ConsoleLine.locationFields(words)) { $1 }
        case .photo(let hash):
            fields["photo"] = Hex.encode((message.photo?.hash ?? hash).bytes)
            fields["photoAvailable"] = message.photo?.availability == .available
        }
        let text = "#\(ref) \(time) \(who): " + VisibleText.lines(body).joined(separator: "\n") + status
        let colored =
            Palette.dim("#\(ref) \(time)") + " " + Palette.name(who, of: message.author) + ": "
            + VisibleText.lines(body).joined(separator: "\n") + Palette.dim(status)
        return ConsoleLine(text: text, colored: colored, event: "direct", fields: fields)
    }

    private func writeStatus(_ message: DirectMessageSnapshot, _ status: Status) {
        let ref = state.withLock { $0.refs.ref(for: message.id) }
        let other = displayName(of: message.correspondent)
        let (text, event) =
            switch status {
            case .pending: ("* #\(ref) is waiting for a peer to store it", "direct-pending")
            case .stored: ("* #\(ref) ✓ stored by another node", "direct-stored")
            case .read: ("* #\(ref) ✓ read by \(other)", "direct-read")
            }
        console.write(ConsoleLine(text: text, colored: Palette.dim(text), event: event, fields: ["id": message.id.hex, "ref": ref]))
    }

    /// How the JSON form names a person (`Protocol/REPL-JSON.md`): key, full fingerprint and, if known, name.
    private func person(_ key: PublicKey) -> [String: any Sendable] {
        var fields: [String: any Sendable] = ["author": Hex.encode(key.bytes), "fingerprint": key.fingerprint.full]
        if let name = (try? node.knownAuthors())?[key] { fields["name"] = name }
        return fields
    }

    private func displayName(of key: PublicKey) -> String {
        let known = (try? node.knownAuthors()) ?? [:]
        let fingerprint = People.displayedFingerprint(of: key, among: Array(known.keys) + [key])
        guard let name = known[key] else { return fingerprint }
        return "\(VisibleText.name(name)) (\(fingerprint))"
    }

    private static func body(
        _ content: MessageContent, photo: PhotoSnapshot? = nil, location: LocationDescription? = nil
    ) -> String {
        switch content {
        case .text(let text): VisibleText.body(text)
        case .location(let point):
            ConsoleLine.locationBody(location ?? LocationDescription(location: point, place: nil, distance: nil))
        case .photo:
            if let info = photo?.info, photo?.availability == .available {
                "📷 \(ConsoleLine.photoFacts(info))"
            } else if photo?.availability == .missing, photo?.info == nil {
                "📷 a photo that cannot be opened"
            } else {
                "📷 a photo, on its way"
            }
        }
    }

    private static func preview(_ content: MessageContent, photo: PhotoSnapshot?) -> String {
        let body = VisibleText.lines(body(content, photo: photo)).joined(separator: " ")
        return body.count > 60 ? String(body.prefix(59)) + "…" : body
    }

    private static func command(for conversation: ConversationSnapshot) -> String {
        conversation.displayName.map(VisibleText.name).map { $0.contains(" ") ? conversation.correspondent.fingerprint.short : $0 }
            ?? conversation.correspondent.fingerprint.short
    }
}
