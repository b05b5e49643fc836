import Dongne
import DongneNet
import Foundation

/// One line the user typed, understood. Parsing is pure: every way a line can be wrong has a message here.
enum Command: Equatable {
    case say(String)
    case join(String)
    case channels
    case history(Int)
    case more
    case location(latitude: Double, longitude: Double)
    /// `/location` alone: where the user is.
    case locationHere
    case whereShow
    case whereSet(Location?)
    case posting(PostingRule)
    case nearby
    case photo(path: String)
    case save(ref: String, path: String)
    case view(ref: String)
    case avatar(String)
    case open(ref: String)
    case report(ref: String, reason: String?)
    case retract(ref: String)
    case hidden
    case show(ref: String)
    case block(String)
    case unblock(String)
    case blocks
    case nick(String)
    case whoami
    case peers
    case names
    case part(String?)
    case connect(String)
    case dm(user: String, text: String?)
    case dms
    case receipts(Bool)
    case help
    case quit
    case nothing

    /// Every command's name, for Tab.
    static let commandNames = [
        "/join", "/part", "/channels", "/names", "/history", "/more", "/location", "/where", "/posting", "/nearby",
        "/photo", "/save", "/view",
        "/open", "/avatar", "/report", "/retract", "/block",
        "/unblock", "/blocks", "/nick", "/whoami", "/peers", "/connect", "/dm", "/dms", "/receipts", "/help", "/quit",
    ]

    /// Most messages `/history` and `/more` print at once.
    static let maximumPage = 500
    /// What `/history` prints without a number, and what `/more` prints.
    static let defaultPage = 20

    /// The command on `line`, or a one-line explanation of what is wrong with it.
    static func parse(_ line: String) -> Result<Command, CommandError> {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return .success(.nothing) }
        guard trimmed.hasPrefix("/") else { return .success(.say(line)) }
        if trimmed.hasPrefix("//") { return .success(.say(String(trimmed.dropFirst()))) }  // "//x" says "/x"
        guard !trimmed.contains("\n") else {
            return .failure(CommandError("a text of several lines that starts with / reads as a command: start it with // to send it"))
        }
        let words = trimmed.dropFirst().split(separator: " ", maxSplits: 1).map(String.init)
        guard let name = words.first?.lowercased() else {
            return .failure(CommandError("a command name must follow / (try /help)"))
        }
        let rest = words.count > 1 ? words[1].trimmingCharacters(in: .whitespaces) : ""
        switch name {
        case "join":
            // IRC's channels start with #: "/join #경기도" means 경기도 (a reference like #3fa2 is never a channel).
            let name = rest.hasPrefix("#") ? String(rest.dropFirst()) : rest
            return name.isEmpty ? usage("/join NAME") : .success(.join(name))
        case "channels": return noArguments(rest, .channels)
        case "history": return page(rest)
        case "more": return noArguments(rest, .more)
        case "location": return rest.isEmpty ? .success(.locationHere) : location(rest)
        case "where": return whereCommand(rest)
        case "posting":
            guard let rule = PostingRule(rawValue: rest) else { return usage("/posting neighbourhood|anywhere") }
            return .success(.posting(rule))
        case "nearby": return noArguments(rest, .nearby)
        case "photo": return rest.isEmpty ? usage("/photo PATH") : .success(.photo(path: Self.path(rest)))
        case "save":
            let parts = rest.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return usage("/save REF PATH") }
            return .success(.save(ref: parts[0], path: Self.path(parts[1])))
        case "view": return oneWord(rest, "/view REF", Command.view)
        case "avatar": return rest.isEmpty ? usage("/avatar PATH|USER") : .success(.avatar(Self.path(rest)))
        case "open": return oneWord(rest, "/open REF", Command.open)
        case "report":
            let parts = rest.split(separator: " ", maxSplits: 1).map(String.init)
            guard let ref = parts.first else { return usage("/report REF [REASON]") }
            return .success(.report(ref: ref, reason: parts.count > 1 ? parts[1] : nil))
        case "retract": return oneWord(rest, "/retract REF", Command.retract)
        case "hidden": return noArguments(rest, .hidden)
        case "show": return oneWord(rest, "/show REF", Command.show)
        case "block": return rest.isEmpty ? usage("/block USER") : .success(.block(rest))
        case "unblock": return rest.isEmpty ? usage("/unblock USER") : .success(.unblock(rest))
        case "blocks": return noArguments(rest, .blocks)
        case "nick": return rest.isEmpty ? usage("/nick NAME") : .success(.nick(rest))
        case "whoami": return noArguments(rest, .whoami)
        case "peers": return noArguments(rest, .peers)
        case "names", "who": return noArguments(rest, .names)
        case "part", "leave":
            guard !rest.isEmpty else { return .success(.part(nil)) }
            let name = rest.hasPrefix("#") ? String(rest.dropFirst()) : rest
            return name.isEmpty ? usage("/part [NAME]") : .success(.part(name))
        case "connect":
            guard SocketAddress(rest) != nil || rest.isEmpty else {
                return .failure(CommandError("\(rest) is not HOST:PORT (e.g. 192.168.0.7:4747)"))
            }
            return oneWord(rest, "/connect HOST:PORT", Command.connect)
        case "dm", "msg":
            let parts = rest.split(separator: " ", maxSplits: 1).map(String.init)
            guard let user = parts.first else { return usage("/dm USER [TEXT]") }
            let text = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            return .success(.dm(user: user, text: text.isEmpty ? nil : text))
        case "dms": return noArguments(rest, .dms)
        case "receipts":
            switch rest.lowercased() {
            case "on": return .success(.receipts(true))
            case "off": return .success(.receipts(false))
            default: return usage("/receipts on|off")
            }
        case "help": return .success(.help)
        case "quit", "exit": return .success(.quit)
        default: return .failure(CommandError("unknown command /\(name) (try /help)"))
        }
    }

    /// A path as typed: `~` is the home folder, and quotes around it (as a file manager pastes it) go.
    private static func path(_ text: String) -> String {
        var path = text
        if path.count >= 2, let first = path.first, first == "'" || first == "\"", path.last == first {
            path = String(path.dropFirst().dropLast())
        }
        if path == "~" || path.hasPrefix("~/") { path = Configuration.homeDirectory + path.dropFirst() }
        return path
    }

    private static func usage(_ form: String) -> Result<Command, CommandError> {
        .failure(CommandError("usage: \(form)"))
    }

    private static func noArguments(_ rest: String, _ command: Command) -> Result<Command, CommandError> {
        rest.isEmpty ? .success(command) : .failure(CommandError("\(command.name) takes no arguments"))
    }

    private static func oneWord(
        _ rest: String, _ form: String, _ make: (String) -> Command
    ) -> Result<Command, CommandError> {
        guard !rest.isEmpty, !rest.contains(" ") else { return usage(form) }
        return .success(make(rest))
    }

    private static func page(_ rest: String) -> Result<Command, CommandError> {
        guard !rest.isEmpty else { return .success(.history(defaultPage)) }
        guard let count = Int(rest), (1...maximumPage).contains(count) else {
            return usage("/history [N], N from 1 to \(maximumPage)")
        }
        return .success(.history(count))
    }

    private static func location(_ rest: String) -> Result<Command, CommandError> {
        let parts = rest.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
            latitude.isFinite, longitude.isFinite
        else { return usage("/location LATITUDE LONGITUDE (degrees, e.g. /location 37.5665 126.978)") }
        return .success(.location(latitude: latitude, longitude: longitude))
    }

    private static func whereCommand(_ rest: String) -> Result<Command, CommandError> {
        if rest.isEmpty { return .success(.whereShow) }
        if rest == "forget" { return .success(.whereSet(nil)) }
        do { return .success(.whereSet(try Location(parsing: rest))) } catch {
            return .failure(CommandError("\(error) (/where LAT LON, or /where forget)"))
        }
    }

    private var name: String {
        switch self {
        case .channels: "/channels"
        case .more: "/more"
        case .blocks: "/blocks"
        case .hidden: "/hidden"
        case .whoami: "/whoami"
        case .peers: "/peers"
        case .names: "/names"
        case .dms: "/dms"
        case .nearby: "/nearby"
        default: "this command"
        }
    }

    static let helpText = """
        Type a line to send it to the current channel ("//text" sends "/text").
          /join NAME             join a channel and make it current (also to switch between joined ones)
          /part [NAME]           leave the current channel (or NAME)
          /channels              list the channels this node knows, with what is unread
          /names                 who posts in this channel, and who of them is connected
          /history [N]           show the last N messages (20)
          /more                  show the 20 messages before the oldest shown
          /location [LAT LON]    send a location (without one: where you are)
          /where [LAT LON]       where you are, and what follows (with LAT LON: say where you are; a GPS through
                                 gpsd wins while it has a fix; /where forget forgets it)
          /nearby                the channels for where you are, with how many people and messages each has
          /posting RULE          neighbourhood: post in place channels only where you are (the default);
                                 anywhere: in any channel
          /photo PATH            send a photo (JPEG, PNG, WebP or HEIC; its metadata, GPS above all, is removed),
                                 sealed for one person while you look at a conversation
          /save REF PATH         write a photo to a file, as it was sent
          /view REF              draw a photo here (its thumbnail until it has arrived)
          /open REF              open a photo in the desktop's viewer
          /avatar PATH|USER      make a photo your avatar, or draw USER's (/names says who has one)
          /report REF [REASON]   report a message (REF: its #ref, as shown before it); hides it for you
          /retract REF           withdraw one of your messages
          /hidden                list this channel's hidden messages, and why each is hidden
          /show REF              show a hidden message anyway (not a withdrawn one), and why it is hidden
          /block USER            hide everything by USER (fingerprint prefix, or an unambiguous name)
          /unblock USER          lift a block
          /blocks                list blocked people
          /nick NAME             change your display name
          /whoami                show your name and fingerprint
          /peers                 list connected peers
          /connect HOST:PORT     connect to a peer
          /dm USER TEXT          send USER a direct message: only they can read it, or learn it is for them
          /dm USER               talk with USER: what you type goes to them (/join NAME goes back)
          /dms                   list your conversations, with what is unread
          /receipts on|off       tell senders when you read their messages (on), or never (off)
          /help                  this list
          /quit                  leave (also Ctrl-D on an empty line)
        Keys: Tab completes commands, names and channels; Up and Down go through what you typed; Ctrl-C \
        clears the line; a pasted text of several lines is sent as one message when you press Enter.
        """
}

/// A line that could not be understood, and why.
struct CommandError: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
}
