import Dongne
import DongneNet
import Foundation

/// The command line of `dongne`, parsed by hand: the toolchain ships no argument parser we may depend on.
struct CommandLineOptions: Equatable {
    var dataDirectory = Configuration.defaultDataDirectory
    var displayName: String? = nil
    var channel: String? = nil
    var location: Location? = nil
    /// Where gpsd answers; nil with `--no-gps`.
    var gpsd: String? = "127.0.0.1:2947"
    var json = false
    var showHelp = false
    var port: UInt16? = 4_747
    var listenAddress = "0.0.0.0"
    var peers: [String] = []
    var networkKey = NetworkKey.defaultPassphrase
    var discovery = true
    /// Hours after a poster's first message in a channel reached this node that their reports count there.
    var reporterStandingHours = Double(ModerationPolicy.defaultReporterStandingAge) / 3_600_000
    /// The stamp strength every author must show (PROTOCOL.md §1.13), this node's own included.
    var stampStrength = IdentityStamp.defaultRequiredStrength
    /// The longest a direct message or receipt of the user's waits before it is offered to peers, in seconds.
    var directHoldBack = 3.0
    /// The local API's socket; nil: where ``LocalAPIServer/socketPath(dataDirectory:environment:)`` puts it.
    var socket: String? = nil
    /// The least important log lines written (`dongne node`).
    var logLevel = OperatorLog.Level.notice
    /// How many messages `dongne history` prints.
    var limit = 20
    /// What follows a subcommand that is not an option (`dongne send CHANNEL TEXT`).
    var arguments: [String] = []

    static let usage = """
        usage: dongne [--data DIR] [--name NAME] [--channel NAME] [--location LAT,LON] [--port N] [--listen ADDRESS]
                      [--peer HOST:PORT]… [--network-key SECRET] [--reporter-standing HOURS] [--stamp-strength BITS]
                      [--dm-hold-back SECONDS] [--gpsd HOST:PORT] [--no-gps] [--no-dnssd]
                      [--json] [--help]
               dongne node [the options above] [--socket PATH] [--log-level LEVEL]
               dongne status [--data DIR | --socket PATH] [--json]
               dongne send CHANNEL TEXT [--data DIR | --socket PATH] [--json]
               dongne history CHANNEL [--limit N] [--data DIR | --socket PATH] [--json]

          node              run the node without a terminal (a service): programs and scripts reach it through
                            its local API, a Unix socket (Protocol/LOCAL-API.md)
          status, send, history
                            one request to the node running on this data directory: exit 0 when it was done,
                            1 when the node refused it (the reason on standard error), 3 when no node runs
          --socket PATH     the local API's socket (default $XDG_RUNTIME_DIR/dongne/api.sock for the default
                            data directory, else DIR/api.sock)
          --log-level LEVEL what `dongne node` logs: error, warning, notice (default), info or debug
          --limit N         how many messages `dongne history` prints (default 20)

          --data DIR        where the identity key and the store live (default: \(Configuration.defaultDataDirectory))
          --name NAME       the name shown beside your messages (a label, not an identity)
          --channel NAME    the channel to join at start
          --location LAT,LON
                            where you are, in decimal degrees (e.g. 37.5759,126.9769): remembered, and used
                            while no GPS has a fix; it names your neighbourhood's channels, where you can post
          --gpsd HOST:PORT  where gpsd (the GPS daemon) answers (default 127.0.0.1:2947)
          --no-gps          do not ask gpsd for a position
          --port N          accept peers on TCP port N (default 4747; 0: any free port; --port off: none)
          --listen ADDRESS  accept peers on this IPv4 address only (default 0.0.0.0: every interface)
          --peer HOST:PORT  connect to a peer at start (repeatable)
          --network-key S   the passphrase of a private network (default: the public dongne network)
          --reporter-standing HOURS
                            count someone's reports in a channel once their first message there reached you
                            this many hours before (default 24; 0: at once, for a network whose members all
                            know each other)
          --stamp-strength BITS
                            store only documents whose author's identity stamp shows 2^BITS hashes of work
                            (default \(IdentityStamp.defaultRequiredStrength): a few seconds once per identity; 0: none, for
                            a network whose members all know each other); every node of a network should
                            use the same
          --dm-hold-back SECONDS
                            hold each direct message you send a random 0.5 to SECONDS seconds before offering
                            it to peers (default 3), so that the first node it reaches cannot take every
                            envelope your node offers at once for one you wrote; 0 sends at once
          --no-dnssd        do not advertise this node or look for others with DNS-SD (Avahi)
          --json            print every event as one JSON object per line
          --help            show this help

        Type /help inside for the commands.
        """

    /// Parses `arguments` (without the program name); a message saying what is wrong when they make no sense.
    static func parse(_ arguments: [String]) -> Result<CommandLineOptions, UsageError> {
        var options = CommandLineOptions()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": options.showHelp = true
            case "--json": options.json = true
            case "--no-dnssd": options.discovery = false
            case "--no-gps": options.gpsd = nil
            case "--data", "--name", "--channel", "--location", "--gpsd", "--port", "--listen", "--peer", "--network-key",
                "--reporter-standing", "--stamp-strength", "--dm-hold-back", "--socket", "--log-level", "--limit":
                guard let value = rest.popFirst(), !value.isEmpty else {
                    return .failure(UsageError(message: "\(argument) needs a value"))
                }
                if let problem = options.set(argument, value) { return .failure(UsageError(message: problem)) }
            default:
                guard !argument.hasPrefix("--") else { return .failure(UsageError(message: "unknown option \(argument)")) }
                options.arguments.append(argument)
            }
        }
        return .success(options)
    }

    /// Sets one option; a problem with its value, if any.
    private mutating func set(_ option: String, _ value: String) -> String? {
        switch option {
        case "--data": dataDirectory = value
        case "--name": displayName = value
        case "--channel": channel = value
        case "--location":
            do { location = try Location(parsing: value) } catch { return "--location: \(error)" }
        case "--gpsd":
            guard SocketAddress(value) != nil else { return "--gpsd takes HOST:PORT, e.g. 127.0.0.1:2947" }
            gpsd = value
        case "--port":
            guard value != "off" else { port = nil; return nil }
            guard let number = UInt16(value) else { return "--port takes a number from 0 to 65535, or off" }
            port = number
        case "--listen":
            let address = value == "localhost" ? "127.0.0.1" : value
            guard SocketAddress(host: address, port: 1) != nil else { return "--listen takes an IPv4 address, e.g. 127.0.0.1" }
            listenAddress = address
        case "--peer":
            guard SocketAddress(value) != nil else { return "--peer takes HOST:PORT, e.g. 127.0.0.1:4747" }
            peers.append(value)
        case "--reporter-standing":
            guard let hours = Double(value), hours >= 0, hours <= 24 * 365 else {
                return "--reporter-standing takes a number of hours from 0 to 8760"
            }
            reporterStandingHours = hours
        case "--stamp-strength":
            guard let bits = Int(value), (0...32).contains(bits) else {
                return "--stamp-strength takes a number of bits from 0 to 32"
            }
            stampStrength = bits
        case "--socket": socket = value
        case "--log-level":
            guard let level = OperatorLog.Level(rawValue: value) else {
                return "--log-level takes error, warning, notice, info or debug"
            }
            logLevel = level
        case "--limit":
            guard let count = Int(value), (1...LocalAPIRequests.maximumLimit).contains(count) else {
                return "--limit takes a number from 1 to \(LocalAPIRequests.maximumLimit)"
            }
            limit = count
        case "--dm-hold-back":
            guard let seconds = Double(value), seconds >= 0, seconds <= 60 else {
                return "--dm-hold-back takes a number of seconds from 0 to 60"
            }
            directHoldBack = seconds
        default: networkKey = value
        }
        return nil
    }
}

/// A command line that makes no sense, and why.
struct UsageError: Error, Equatable {
    let message: String
}
