import Dongne
import Synchronization

/// The REPL's state and commands: a thin client of the public library.
///
/// Commands run one at a time, in the order typed; none waits on the network (a dial goes on in the
/// background), so typing is never held up. Every joined channel has a live listener on its last page (see
/// ``ChannelFeed``): the current channel's new messages print, the others' are counted as unread and shown in
/// the prompt. Listener callbacks arrive on the node's listener executor; the state is behind a `Mutex`, and
/// lines are written while it is held, so that both paths print in one consistent order.
final class Session: Sendable {
    let node: Node
    let console: any Console
    private let isJSON: Bool
    /// Today on the local clock, for dates (a fixed day in transcripts).
    private let today: @Sendable () -> LocalTime?
    private let state = Mutex(State())

    struct State {
        var refs = MessageRefs()
        var feeds: [ChannelID: ChannelFeed] = [:]
        var registrations: [ChannelID: ListenerRegistration] = [:]
        var current: ChannelID?
        /// Per channel, the newest message shown when the user last looked at it.
        var lastSeen: [ChannelID: SortKey] = [:]
        /// The channels the user has looked at in this session (what arrives in the others is not unread news).
        var viewed: Set<ChannelID> = []
        var unread: [ChannelID: Int] = [:]
        var mentioned: Set<ChannelID> = []
        var oldestShown: [ChannelID: MessageSnapshot] = [:]
        var lastDay: LocalTime?
        /// Authors being blocked or unblocked: their messages leave and return without a line each.
        var silent: Set<PublicKey> = []
        /// The name each author was last shown with, to announce a change.
        var names: [PublicKey: String] = [:]
        /// When the message that showed each of those names was created.
        var namesAsOf: [PublicKey: UInt64] = [:]
        /// A look-alike channel name typed once: typing it again creates it.
        var confirmedLookAlike: String?
        var channelNames: [String] = []
        var channelList: ListenerRegistration?
        var firstSnapshot: [ChannelID: CheckedContinuation<Void, Never>] = [:]
        /// Per channel, which quiet-period wait is the latest (an arrival, or leaving the channel, starts anew).
        var holdGeneration: [ChannelID: Int] = [:]
        /// Per channel, since when other people's messages have been waiting for `reconciled`.
        var holdStarted: [ChannelID: ContinuousClock.Instant] = [:]
        /// Photo messages whose photo's arrival gets its lines (once each), with their photos: `/save` and
        /// `/view` find a photo shown a moment ago, before its message is stored.
        var followedPhotos: [DocumentID: BlobHash] = [:]
    }

    /// `/peers`, `/connect`, `/whoami` and the lines peers' comings and goings print.
    let peers: PeerCommands
    /// `/dm`, `/dms`, `/receipts`, and what direct messages print.
    let direct: DirectCommands
    /// `/where`, `/posting`, `/nearby`, and what the REPL says when the GPS or the neighbourhood changes.
    let whereabouts: WhereCommands

    init(node: Node, console: any Console, isJSON: Bool, today: @escaping @Sendable () -> LocalTime?) {
        self.node = node
        self.console = console
        self.peers = PeerCommands(node: node, console: console)
        self.direct = DirectCommands(node: node, console: console, today: today)
        self.whereabouts = WhereCommands(node: node, console: console)
        self.isJSON = isJSON
        self.today = today
    }

    /// Runs one line; false when the session should end.
    func handle(_ line: String) async -> Bool {
        switch Command.parse(line) {
        case .failure(let error):
            console.write(.error(error.message))
        case .success(.quit):
            return false
        case .success(let command):
            do { try await run(command) } catch { console.write(Explanation.line(for: error)) }
        }
        return true
    }

    /// Starts following the user's conversations (notices and unread counts in the prompt).
    func followDirectMessages() {
        direct.start { [weak self] in self?.state.withLock { self?.updatePrompt($0) } }
    }

    /// Stops listening.
    func close() {
        direct.close()
        whereabouts.close()
        let registrations = state.withLock { state in
            defer {
                state.registrations.removeAll()
                state.channelList = nil
            }
            return Array(state.registrations.values) + (state.channelList.map { [$0] } ?? [])
        }
        registrations.forEach { $0.remove() }
    }

    private func run(_ command: Command) async throws {
        switch command {
        case .say(let text):
            if direct.viewing != nil { return try await direct.say(text) }
            try await currentChannel().send(.text(text))
        case .location(let latitude, let longitude):
            if direct.viewing != nil {
                return try await direct.send(location: Location(latitude: latitude, longitude: longitude))
            }
            try await currentChannel().send(.location(latitude: latitude, longitude: longitude))
        case .locationHere:
            guard let here = node.whereabouts.position?.location else {
                return console.write(.error("where you are is not known: /where LAT LON sets it, or /location LAT LON"))
            }
            if direct.viewing != nil { return try await direct.send(location: here) }
            try await currentChannel().send(.location(here))
        case .whereShow: whereabouts.show()
        case .whereSet(let location): try await whereabouts.set(location)
        case .posting(let rule): try await whereabouts.setPosting(rule)
        case .nearby: try whereabouts.nearby()
        case .dm(let user, let text): try await directMessage(user, text)
        case .dms: try await direct.list()
        case .receipts(let on): try await direct.setReceipts(on)
        case .photo(let path):
            if direct.viewing != nil { return try await direct.send(photo: path) }
            try await sendPhoto(path)
        case .save(let ref, let path): try await savePhoto(ref, to: path)
        case .view(let ref): try await viewPhoto(ref)
        case .avatar(let argument): try await avatar(argument)
        case .open(let ref): try openPhoto(ref)
        case .join(let name): try await join(name)
        case .part(let name): try await part(name)
        case .channels: try await listChannels()
        case .names: try await listNames()
        case .history(let count): try await showHistory(count)
        case .more: try await showMore()
        case .report(let ref, let reason):
            try await currentChannel().report(try message(ref), reason: reason)
            console.write(.notice("reported \(ref.hasPrefix("#") ? ref : "#" + ref)"))
        case .retract(let ref):
            try await currentChannel().retract(try message(ref))
            console.write(.notice("retracted \(ref.hasPrefix("#") ? ref : "#" + ref): it is gone for everyone"))
        case .hidden: try listHidden()
        case .show(let ref): try show(ref)
        case .block(let query): try await block(query)
        case .unblock(let query): try await unblock(query)
        case .blocks: try listBlocks()
        case .nick(let name):
            try await node.setDisplayName(name)
            console.write(.notice("you are now \(VisibleText.name(name))"))
        case .whoami: peers.whoami()
        case .peers: await peers.list()
        case .connect(let address): peers.connect(address)
        case .help: Command.helpText.split(separator: "\n").forEach { console.write(.notice(String($0))) }
        case .quit, .nothing: break
        }
    }

    // MARK: Channels

    /// Joins the channels the node had joined before (their unread counts start now), without showing them,
    /// and keeps the names of the known channels for Tab.
    func followJoinedChannels() async {
        let list = node.channels.addSnapshotListener { [weak self] snapshot, _ in
            guard let names = snapshot?.documents.map(\.name) else { return }
            self?.state.withLock { $0.channelNames = names }
        }
        state.withLock { $0.channelList = list }
        let joined = (try? await node.channels.getDocuments().documents.filter(\.isJoined)) ?? []
        for channel in joined {
            guard let channel = try? node.channel(named: channel.name) else { continue }
            await follow(channel)
        }
        state.withLock { updatePrompt($0) }
    }

    func join(_ name: String) async throws {
        let target = try node.channel(named: name)
        try await refuseLookAlike(target.name.value)
        let channel = try await node.join(target.name.value)
        let isNew = state.withLock { $0.feeds[channel.id] == nil }
        console.write(
            ConsoleLine(
                text: "* joined \(VisibleText.channel(channel.name.value))", event: "joined",
                fields: ["channel": channel.name.value]))
        if isNew { await follow(channel) }
        let hasPeers = await !node.peers().isEmpty
        direct.stopViewing()
        state.withLock { state in
            leaveCurrent(&state)
            state.current = channel.id
            let unread = state.unread.removeValue(forKey: channel.id) ?? 0
            state.mentioned.remove(channel.id)
            showPage(of: channel.id, hasPeers: hasPeers, unread: unread, &state)
            if state.feeds[channel.id]?.isReady == false { waitForQuiet(in: channel.id, &state) }
            updatePrompt(state)
        }
    }

    /// Starts the live window of a channel and waits for its first snapshot.
    private func follow(_ channel: Channel) async {
        let query = channel.messages.whereField(.isActive, isEqualTo: true).order(by: .created)
            .limit(toLast: ChannelFeed.pageSize)
        // With no peer connected nothing can be on its way: what the store holds may show at once.
        let alone = await node.peers().isEmpty
        await withCheckedContinuation { continuation in
            state.withLock { state in
                state.feeds[channel.id] = ChannelFeed(name: channel.name, me: node.publicKey, showsStoredAtOnce: alone)
                state.firstSnapshot[channel.id] = continuation
            }
            do {
                let registration = try query.addSnapshotListener(includeMetadataChanges: true) {
                    [weak self] snapshot, error in
                    self?.received(snapshot, error, in: channel.id)
                }
                state.withLock { $0.registrations[channel.id] = registration }
            } catch {
                console.write(Explanation.line(for: error))
                state.withLock { _ = $0.firstSnapshot.removeValue(forKey: channel.id) }
                continuation.resume()
            }
        }
    }

    /// A channel whose name differs from a known one only by case or spacing is probably a typo: the first
    /// `/join` says so, a second one creates it.
    private func refuseLookAlike(_ name: String) async throws {
        let known = try await node.channels.getDocuments().documents.map(\.name)
        state.withLock { $0.channelNames = known }
        let folded = VisibleText.folded(name)
        guard !known.contains(name), let similar = known.first(where: { VisibleText.folded($0) == folded }) else { return }
        let confirmed = state.withLock { state in
            defer { state.confirmedLookAlike = name }
            return state.confirmedLookAlike == name
        }
        guard !confirmed else { return }
        let (shown, other) = (VisibleText.channel(name), VisibleText.channel(similar))
        throw CommandError(
            "\(shown) differs from the channel \(other) only by case, spacing or invisible characters: "
                + "/join \(other) to go there, or /join \(shown) again to make a new channel")
    }


    private func part(_ name: String?) async throws {
        let channel = try name.map { try node.channel(named: $0) } ?? currentChannel()
        guard state.withLock({ $0.feeds[channel.id] != nil }) else {
            throw CommandError("you have not joined \(VisibleText.channel(channel.name.value))")
        }
        try await node.leave(channel)
        let registration = state.withLock { state -> ListenerRegistration? in
            if state.current == channel.id {
                leaveCurrent(&state)
                state.current = nil
            }
            state.feeds[channel.id] = nil
            state.holdGeneration[channel.id, default: 0] += 1  // a wait still running is for the old feed
            state.holdStarted[channel.id] = nil
            state.unread[channel.id] = nil
            state.mentioned.remove(channel.id)
            updatePrompt(state)
            return state.registrations.removeValue(forKey: channel.id)
        }
        registration?.remove()
        console.write(
            ConsoleLine(
                text: "* left \(VisibleText.channel(channel.name.value))", event: "parted",
                fields: ["channel": channel.name.value]))
    }

    /// Remembers how far the user read the channel they are leaving, for the "new since" marker.
    private func leaveCurrent(_ state: inout State) {
        guard let current = state.current else { return }
        state.viewed.insert(current)
        if let newest = state.feeds[current]?.newest { state.lastSeen[current] = newest }
    }

    /// Prints a channel's page if it is ready, with a marker before what is new since the user last looked.
    private func showPage(of channel: ChannelID, hasPeers: Bool, unread: Int, _ state: inout State) {
        guard let feed = state.feeds[channel] else { return }
        let name = VisibleText.channel(feed.name.value)
        guard feed.isReady else {
            if feed.visible.isEmpty {
                console.write(
                    .notice(
                        hasPeers
                            ? "catching up on \(name): its messages show once a peer has sent all it has"
                            : "no messages in \(name) yet; they show when peers bring them"))
            }
            return printMessages(feed.visible, in: channel, marker: nil, &state)
        }
        if feed.window.isEmpty { return console.write(.notice("no messages in \(name) yet")) }
        guard let seen = state.lastSeen[channel] else {
            return printMessages(feed.visible, in: channel, marker: nil, &state)
        }
        showSince(seen, of: feed, unread: unread, &state)
    }

    /// Back in a channel: what is new since the user last looked, after the last two lines they saw.
    private func showSince(_ seen: SortKey, of feed: ChannelFeed, unread: Int, _ state: inout State) {
        let channel = feed.name.id
        let visible = feed.visible
        let new = visible.filter { $0.position > seen }
        guard !new.isEmpty else {
            return console.write(.notice("nothing new in \(VisibleText.channel(feed.name.value)) since you last looked"))
        }
        let othersNew = new.filter { $0.author != node.publicKey }.count
        if let first = feed.window.first, first.position > seen, unread > othersNew {
            console.write(.notice("\(unread - othersNew) more new messages before these: /more shows them"))
        }
        let context = visible.filter { $0.position <= seen }.suffix(2)
        printMessages(Array(context) + new, in: channel, marker: seen, &state)
    }

    // MARK: What listeners bring

    private func received(_ snapshot: QuerySnapshot<MessageSnapshot>?, _ error: (any Error)?, in channel: ChannelID) {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            let waiting = state.firstSnapshot.removeValue(forKey: channel)
            guard let snapshot else {
                console.write(.error("listening stopped: \(error.map { "\($0)" } ?? "")"))
                return waiting
            }
            guard var feed = state.feeds[channel] else { return waiting }
            let items = feed.apply(snapshot, silent: state.silent)
            state.feeds[channel] = feed
            for item in items { show(item, in: channel, &state) }
            if feed.isHolding {
                waitForQuiet(in: channel, &state)
            } else {
                state.holdStarted[channel] = nil
            }
            return waiting
        }
        waiting?.resume()
    }

    /// Shows what waits once arrivals have been quiet for a while, or have waited the longest a page may,
    /// should no peer ever say `reconciled`.
    private func waitForQuiet(in channel: ChannelID, _ state: inout State) {
        state.holdGeneration[channel, default: 0] += 1
        let generation = state.holdGeneration[channel]
        let started = state.holdStarted[channel] ?? .now
        state.holdStarted[channel] = started
        let left = ChannelFeed.longestWait - (ContinuousClock.now - started)
        let delay = max(.zero, min(ChannelFeed.quietCatchUp, left))
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            self?.state.withLock { state in
                guard state.holdGeneration[channel] == generation, var feed = state.feeds[channel] else { return }
                let items = feed.stopWaiting()
                state.feeds[channel] = feed
                state.holdStarted[channel] = nil
                for item in items { self?.show(item, in: channel, &state) }
            }
        }
    }

    private func show(_ item: ChannelFeed.Item, in channel: ChannelID, _ state: inout State) {
        let isCurrent = state.current == channel
        switch item {
        case .page(let messages):
            if isCurrent, messages.isEmpty, let feed = state.feeds[channel], feed.window.isEmpty {
                console.write(.notice("no messages in \(VisibleText.channel(feed.name.value)) yet"))
            } else if isCurrent {
                printMessages(messages, in: channel, marker: state.lastSeen[channel], &state)
            } else if state.viewed.contains(channel) {  // a page that waited while the user looked elsewhere
                let mark = state.lastSeen[channel]
                count(messages.filter { message in mark.map { message.position > $0 } ?? true }, in: channel, &state)
            }
        case .new(let messages):
            if isCurrent { printMessages(messages, in: channel, marker: nil, live: true, &state) } else { count(messages, in: channel, &state) }
        case .hidden(let message):
            if isCurrent, let ref = state.refs.existingRef(for: message.id) {
                let moderation = state.feeds[channel].flatMap { feed in
                    try? node.channel(named: feed.name.value).moderation(of: message.id)
                }
                let why = moderation.flatMap { $0.isHidden ? HiddenReasons.words($0) : nil }
                console.write(.removed(message, ref: ref, why: why))
            }
        case .reported(let message):
            if isCurrent, let ref = state.refs.existingRef(for: message.id) { console.write(.reported(message, ref: ref)) }
        case .acknowledged(let message):
            if isJSON { console.write(.acknowledged(message, ref: state.refs.ref(for: message.id))) }
        case .earlierArrived:
            if isCurrent {
                console.write(.notice("earlier messages arrived from peers; /history shows them in order"))
            }
        }
    }

    /// Prints messages in order, with a day line when the day changes and a marker before the first one newer
    /// than `marker`.
    private func printMessages(
        _ messages: [MessageSnapshot], in channel: ChannelID, marker: SortKey?, live: Bool = false,
        _ state: inout State
    ) {
        guard !messages.isEmpty else { return }
        let known = knownKeys()
        let today = self.today()
        let name = state.feeds[channel]?.name.value ?? ""
        var markerDue = marker.map { mark in messages.contains { $0.position <= mark } } ?? false
        // A photo of the user's still being prepared is a placeholder: its lines of progress say it; the real
        // message prints once it replaces it.
        for message in messages where message.photo?.availability != .preparing {
            if markerDue, let marker, message.position > marker {
                console.write(ConsoleLine(text: "-- new since you last looked --", event: "marker"))
                markerDue = false
            }
            announceDayChange(message, &state)
            if live { announceNameChange(message, known: known, &state) } else { noteName(message, &state) }
            let style = ConsoleLine.MessageStyle(
                ref: state.refs.ref(for: message.id), channel: name,
                fingerprint: People.displayedFingerprint(of: message.author, among: known), today: today,
                mentionsYou: mentionsMe(message), location: node.describeLocation(of: message.content))
            console.write(.message(message, style))
            state.feeds[channel]?.shown(message)
            if case .photo(let hash) = message.content, state.followedPhotos.updateValue(hash, forKey: message.id) == nil {
                followPhoto(of: message, ref: style.ref)
            }
        }
        // `/more` pages back from the top of the latest listing; new messages below it do not move it.
        if !live || state.oldestShown[channel] == nil { state.oldestShown[channel] = messages.first }
    }

    private func announceDayChange(_ message: MessageSnapshot, _ state: inout State) {
        guard let day = LocalTime(milliseconds: message.created) else { return }
        defer { state.lastDay = day }
        guard let last = state.lastDay, !last.isSameDay(as: day) else { return }
        console.write(ConsoleLine(text: Timestamp.dayLine(day), event: "day", fields: ["date": day.date]))
    }

    /// Remembers the name a message shows without announcing anything (history is not news).
    private func noteName(_ message: MessageSnapshot, _ state: inout State) {
        if message.created < state.namesAsOf[message.author] ?? 0 { return }
        state.names[message.author] = message.senderName
        state.namesAsOf[message.author] = message.created
    }

    private func announceNameChange(_ message: MessageSnapshot, known: [PublicKey], _ state: inout State) {
        defer {
            state.names[message.author] = message.senderName
            state.namesAsOf[message.author] = message.created
        }
        guard message.author != node.publicKey, let old = state.names[message.author], old != message.senderName
        else { return }
        let fingerprint = People.displayedFingerprint(of: message.author, among: known)
        console.write(
            ConsoleLine(
                text: "* \(VisibleText.name(old)) (\(fingerprint)) is now known as \(VisibleText.name(message.senderName))",
                event: "nick",
                fields: [
                    "author": Hex.encode(message.author.bytes), "fingerprint": message.author.fingerprint.full,
                    "old": old, "name": message.senderName,
                ]))
    }

    /// Messages in a channel the user is not looking at: counted, and said once when the first arrives.
    private func count(_ messages: [MessageSnapshot], in channel: ChannelID, _ state: inout State) {
        let others = messages.filter { $0.author != node.publicKey }
        guard !others.isEmpty, let raw = state.feeds[channel]?.name.value else { return }
        let name = VisibleText.channel(raw)
        let before = state.unread[channel] ?? 0
        state.unread[channel] = before + others.count
        if before == 0 {
            console.write(
                ConsoleLine(
                    text: "* new messages in \(name) (/join \(name) to read them)", event: "activity",
                    fields: ["channel": raw, "unread": before + others.count]))
        }
        for message in others where mentionsMe(message) && !state.mentioned.contains(channel) {
            state.mentioned.insert(channel)
            console.write(
                ConsoleLine(
                    text: "* \(VisibleText.name(message.senderName)) mentioned you in \(name)", event: "mention",
                    fields: ["channel": raw, "id": message.id.hex]))
        }
        updatePrompt(state)
    }

    private func mentionsMe(_ message: MessageSnapshot) -> Bool {
        guard message.author != node.publicKey, case .text(let text) = message.content else { return false }
        return Mention.names(node.displayName, in: text)
    }

    /// The prompt: the current channel, then the others with unread messages (`@`: you were mentioned there).
    private func updatePrompt(_ state: State) {
        let current = state.current.flatMap { state.feeds[$0]?.name.value }.map(VisibleText.channel)
        let activity = state.unread.compactMap { channel, count -> String? in
            guard count > 0, let raw = state.feeds[channel]?.name.value else { return nil }
            let name = VisibleText.channel(raw)
            return "\(name) \(count)" + (state.mentioned.contains(channel) ? "@" : "")
        }.sorted()
        let (conversation, directUnread) = direct.promptParts()
        var prompt = "[" + (conversation ?? current ?? "no channel")
        var others = activity
        if directUnread > 0 { others.append("✉ \(directUnread)") }
        if !others.isEmpty { prompt += " | " + others.joined(separator: ", ") }
        console.setPrompt(prompt + "] ")
    }

    // MARK: Listing

    private func listChannels() async throws {
        let channels = try await node.channels.getDocuments().documents
        let (current, unread) = state.withLock { state in
            state.channelNames = channels.map(\.name)
            return (state.current, state.unread)
        }
        if channels.isEmpty { console.write(.notice("no channels yet: /join NAME")) }
        for channel in channels {
            var notes = channel.isJoined ? ["joined"] : []
            if channel.id == current { notes.append("current") }
            if let count = unread[channel.id], count > 0 { notes.append("\(count) unread") }
            let suffix = notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))"
            let description = channel.description.map { " — \(VisibleText.body($0))" } ?? ""
            console.write(
                ConsoleLine(
                    text: "* \(VisibleText.channel(channel.name))\(suffix)\(description)", event: "channel",
                    fields: [
                        "channel": channel.name, "joined": channel.isJoined, "current": channel.id == current,
                        "unread": unread[channel.id] ?? 0,
                    ]))
        }
    }

    private func listNames() async throws {
        let channel = try currentChannel()
        let posters = try channel.posters()
        let connected = Set(await node.peers().map(\.identity))
        let known = knownKeys()
        let avatars = (try? node.avatars()) ?? [:]
        if posters.isEmpty { console.write(.notice("no one has posted in \(VisibleText.channel(channel.name.value)) yet")) }
        let sorted = posters.sorted { ($0.value.lowercased(), $0.key) < ($1.value.lowercased(), $1.key) }
        for (key, name) in sorted {
            let fingerprint = People.displayedFingerprint(of: key, among: known)
            let status = key == node.publicKey ? "you" : connected.contains(key) ? "connected here" : "not connected here"
            var fields: [String: any Sendable] = [
                "name": name, "fingerprint": key.fingerprint.full, "author": Hex.encode(key.bytes),
                "connected": connected.contains(key),
            ]
            if let avatar = avatars[key] { fields["avatar"] = Hex.encode(avatar.bytes) }
            let face = avatars[key] == nil ? "" : ", has an avatar (/avatar \(fingerprint) shows it)"
            console.write(
                ConsoleLine(
                    text: "* \(VisibleText.name(name)) (\(fingerprint)) \(status)\(face)", event: "name", fields: fields))
        }
    }

    private func showHistory(_ count: Int) async throws {
        let channel = try currentChannel()
        let query = channel.messages.whereField(.isActive, isEqualTo: true).order(by: .created).limit(toLast: count)
        let messages = try await query.getDocuments().documents
        state.withLock { state in
            state.feeds[channel.id]?.historyShown()
            if messages.isEmpty { console.write(.notice("nothing to show")) }
            printMessages(messages, in: channel.id, marker: nil, &state)
        }
    }

    private func showMore() async throws {
        let channel = try currentChannel()
        guard let oldest = state.withLock({ $0.oldestShown[channel.id] }) else {
            return console.write(.notice("nothing shown yet: try /history"))
        }
        let query = channel.messages.whereField(.isActive, isEqualTo: true).order(by: .created)
            .end(before: oldest).limit(toLast: Command.defaultPage)
        let messages = try await query.getDocuments().documents
        state.withLock { state in
            if messages.isEmpty { console.write(.notice("no older messages")) }
            printMessages(messages, in: channel.id, marker: nil, &state)
        }
    }

    // MARK: People

    private func block(_ query: String) async throws {
        let key = try resolve(query)
        guard key != node.publicKey else { throw CommandError("you cannot block yourself") }
        state.withLock { _ = $0.silent.insert(key) }
        // The listeners' snapshots of the block are delivered before it returns: later ones speak again.
        defer { state.withLock { _ = $0.silent.remove(key) } }
        try await node.block(key)
        let name = VisibleText.name(try node.knownAuthors()[key] ?? "?")
        console.write(.notice("blocked \(key.fingerprint.short) (\(name)): their messages are hidden"))
    }

    private func unblock(_ query: String) async throws {
        var candidates = try node.knownAuthors()
        for key in try node.blockedAuthors() where candidates[key] == nil { candidates[key] = "?" }
        let key = try People.resolve(query, among: candidates).get()
        guard try node.blockedAuthors().contains(key) else {
            throw CommandError("\(key.fingerprint.short) (\(VisibleText.name(candidates[key] ?? "?"))) is not blocked")
        }
        state.withLock { _ = $0.silent.insert(key) }
        defer { state.withLock { _ = $0.silent.remove(key) } }
        try await node.unblock(key)
        let name = VisibleText.name(candidates[key] ?? "?")
        console.write(.notice("unblocked \(key.fingerprint.short) (\(name)): /history shows their messages again"))
    }

    private func listBlocks() throws {
        let names = try node.knownAuthors()
        let blocked = try node.blockedAuthors().sorted()
        if blocked.isEmpty { console.write(.notice("you have blocked no one")) }
        for key in blocked {
            console.write(
                ConsoleLine(
                    text: "* blocked \(key.fingerprint.short) (\(VisibleText.name(names[key] ?? "?")))", event: "blocked",
                    fields: [
                        "author": Hex.encode(key.bytes), "fingerprint": key.fingerprint.full, "name": names[key] ?? "",
                    ]))
        }
    }

    // MARK: Completion

    /// What Tab may complete `word` to: a command name at the start of the line, a channel after `/join`, and
    /// otherwise the names of people this node knows.
    func completions(line: String, word: String) -> [String] {
        if word.hasPrefix("/") && line.trimmingPrefix(while: \.isWhitespace).hasPrefix(word) { return Command.commandNames }
        if line.hasPrefix("/join ") { return state.withLock { $0.channelNames } }
        return Array(Set(((try? node.knownAuthors()) ?? [:]).values))
    }

    // MARK: Hidden messages

    /// Lists the current channel's hidden messages (the 20 newest, oldest first), each with its reference and
    /// why it is hidden, without their content: `/show` shows one.
    private func listHidden() throws {
        let channel = try currentChannel()
        let hidden = try channel.hiddenMessages(limit: 20).reversed()
        guard !hidden.isEmpty else {
            return console.write(.notice("nothing is hidden in \(VisibleText.channel(channel.name.value))"))
        }
        for moderation in hidden {
            let ref = state.withLock { $0.refs.ref(for: moderation.message.id) }
            console.write(.hidden(moderation, ref: ref, listing: true))
        }
    }

    /// Shows a message of the current channel whatever hides it, then why it is hidden; never one its author
    /// withdrew, which is gone for everyone (PROTOCOL.md §1.11).
    private func show(_ ref: String) throws {
        let channel = try currentChannel()
        let moderation = try channel.moderation(of: try message(ref))
        let message = moderation.message
        if moderation.retracted {
            let ref = state.withLock { $0.refs.ref(for: message.id) }
            return console.write(.notice("#\(ref) was withdrawn by its author: it is gone for everyone"))
        }
        let style = state.withLock { state in
            ConsoleLine.MessageStyle(
                ref: state.refs.ref(for: message.id), channel: channel.name.value,
                fingerprint: People.displayedFingerprint(of: message.author, among: knownKeys()), today: today(),
                mentionsYou: mentionsMe(message), location: node.describeLocation(of: message.content))
        }
        console.write(.message(message, style))
        console.write(.hidden(moderation, ref: style.ref, listing: false))
    }

    // MARK: Direct messages

    /// `/dm USER [TEXT]`: sends, or (without text) looks at the conversation instead of the current channel.
    private func directMessage(_ user: String, _ text: String?) async throws {
        let correspondent = try await resolveCorrespondent(user)
        guard correspondent != node.publicKey else { throw CommandError("that is you: a direct message goes to someone else") }
        if let text { return try await direct.send(text, to: correspondent) }
        state.withLock { state in
            leaveCurrent(&state)
            state.current = nil
        }
        await direct.view(correspondent)
    }

    /// The person `query` names among everyone known, and the people in the user's conversations.
    private func resolveCorrespondent(_ query: String) async throws -> PublicKey {
        var known = try node.knownAuthors()
        let conversations = try await node.conversations.getDocuments().documents
        for correspondent in conversations.map(\.correspondent) where known[correspondent] == nil {
            known[correspondent] = correspondent.fingerprint.full
        }
        return try People.resolve(query, among: known).get()
    }

    // MARK: Helpers

    func resolve(_ query: String) throws -> PublicKey {
        try People.resolve(query, among: try node.knownAuthors()).get()
    }

    private func knownKeys() -> [PublicKey] {
        (try? node.knownAuthors().keys.map { $0 }) ?? []
    }

    func currentChannel() throws -> Channel {
        let (name, joined) = state.withLock { state in
            (state.current.flatMap { state.feeds[$0]?.name }, state.feeds.values.map(\.name.value).sorted())
        }
        guard let name else {
            let hint = joined.isEmpty ? "" : " (joined: \(joined.map(VisibleText.channel).joined(separator: ", ")))"
            throw CommandError("look at a channel first: /join NAME\(hint)")
        }
        return try node.channel(named: name.value)
    }

    /// The photo of a photo message shown in this session, by its message.
    func shownPhoto(_ id: DocumentID) -> BlobHash? { state.withLock { $0.followedPhotos[id] } }

    func message(_ ref: String) throws -> DocumentID {
        try state.withLock { try $0.refs.message(ref).get() }
    }
}

extension CommandError: CustomStringConvertible {
    var description: String { message }
}

extension String {
    fileprivate func trimmingPrefix(while predicate: (Character) -> Bool) -> Substring {
        self[...].drop(while: predicate)
    }
}
