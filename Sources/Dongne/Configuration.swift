import DongneCore
import Foundation
import Synchronization

/// How a node starts: where it keeps its data, what it calls its user, and its local rules.
public struct Configuration: Sendable {
    /// The folder holding the identity key and the store. Created (mode 0700) if missing.
    public var dataDirectory: String
    /// The name shown beside this user's messages. A label only: never unique, never an identity.
    public var displayName: String
    /// Where the user is, when they say so (`--location`): remembered, and used while no GPS has a recent fix.
    /// Nil keeps the position remembered from before, if any.
    public var location: Location?
    /// Where gpsd answers (`HOST:PORT`; it listens on `127.0.0.1:2947`), or nil to ask no GPS (the default for
    /// programs; the `dongne` command asks gpsd unless given `--no-gps`).
    public var gpsd: String?
    /// Where the user may post until they choose otherwise (``Node/setPostingRule(_:)``): ``PostingRule/anywhere``
    /// for programs; the `dongne` command uses ``PostingRule/ownNeighbourhood``, as the seed app did.
    public var postingRule = PostingRule.anywhere
    /// Reports that hide a message (3, as in the seed app).
    public var reportThreshold: Int
    /// How long after this node stored a poster's first message in a channel their reports there count
    /// (milliseconds; ``ModerationPolicy/defaultReporterStandingAge``, a day, by default; 0 counts every poster's
    /// reports at once, for a network whose members all know each other).
    public var reporterStandingAge = ModerationPolicy.defaultReporterStandingAge
    /// Which received documents the node stores (PROTOCOL.md §1.13): the stamp strength every author must show
    /// and the bytes one author may keep in a channel. The public network's rules by default; all nodes of a
    /// network should use the same. The node mines its own stamp of the required strength at its first start.
    public var admission = AdmissionPolicy.default
    /// Where the node reads the time for the documents it signs.
    public var clock: NodeClock
    /// The TCP port to accept peers on: nil for none, 0 for any free port.
    public var listenPort: UInt16?
    /// The IPv4 address the node accepts peers on: every interface (`0.0.0.0`, the default) or one of them.
    public var listenAddress = "0.0.0.0"
    /// Peers to connect to at start, as `HOST:PORT`: dialled and kept, whatever the partial views decide.
    public var peers: [String]
    /// The partial views the node keeps once it listens (HyParView, PROTOCOL.md §2.9): a few neighbours, and
    /// spares to replace them, instead of a session with every peer found. Nil: a session with every peer found.
    public var partialView: PartialView.Settings? = PartialView.Settings()
    /// The passphrase of the network to join (see `NetworkKey`); the default network's by default.
    public var networkPassphrase: String
    /// Whether to advertise the node with DNS-SD (when it listens) and dial the dongne services it finds. Off
    /// by default for programs; the `dongne` command turns it on unless given `--no-dnssd`.
    public var discovery: Bool
    /// Other people's photos this node keeps, in bytes (1 GiB by default): beyond, the least recently used go
    /// first. The user's own photos and those being fetched are kept whatever their size.
    public var photoBudgetBytes = 1 << 30
    /// Photos in joined channels up to this size are fetched as soon as their message arrives (8 MiB by
    /// default); larger ones only their manifest (size, pixels, thumbnail), the rest when asked for
    /// (``Node/fetchPhoto(_:)``).
    public var automaticPhotoFetchBytes = 8 << 20
    /// What one author's photos may take of automatic fetching while the node runs (64 MiB by default): beyond,
    /// their photos are fetched only when asked for, so that one author (whose stamp and quota bound their
    /// messages, not the photos those name) cannot push everyone else's photos out of the budget.
    public var automaticPhotoBytesPerAuthor = 64 << 20
    /// How long a direct message or receipt of this user waits, at random within this range, before it is offered
    /// to peers (PROTOCOL.md §1.8.1): so that the first relay cannot take every envelope a node sends at once for
    /// one the node wrote. It is stored (and shown, pending) at once; only its first offer waits.
    public var directHoldBack: ClosedRange<Duration> = .milliseconds(500) ... .seconds(3)
    /// Whether this user's node tells the senders of direct messages when their messages were read (true by
    /// default, as messengers do); ``Node/setSendsReadReceipts(_:)`` changes it and remembers the choice.
    public var sendsReadReceipts = true
    /// The clock the envelopes of the direct-message space are dated and expired by (the system's: an envelope
    /// is dated by its hour only, and every node must agree on when it expires); a test moves it to see envelopes
    /// expire.
    public var envelopeClock: NodeClock = .system
    /// How long the store may hold a received or local message's commit (see `Store.init(path:deferredCommitDelay:)`);
    /// tests lengthen it to catch a message between its showing and its commit.
    package var deferredCommitDelay: Duration = .milliseconds(4)
    /// Where the network records when each document it sends or receives passed each stage (`scripts/bench-lan`);
    /// nil, the default, records nothing.
    package var deliveryTrace: DeliveryTrace?

    /// A configuration; only the data directory and the display name have no default.
    public init(
        dataDirectory: String, displayName: String, location: Location? = nil, reportThreshold: Int = 3,
        clock: NodeClock = .system, listenPort: UInt16? = nil, peers: [String] = [],
        networkPassphrase: String = NetworkKey.defaultPassphrase, discovery: Bool = false
    ) {
        self.discovery = discovery
        self.dataDirectory = dataDirectory
        self.displayName = displayName
        self.location = location
        self.reportThreshold = reportThreshold
        self.clock = clock
        self.listenPort = listenPort
        self.peers = peers
        self.networkPassphrase = networkPassphrase
    }

    /// `$XDG_DATA_HOME/dongne`, or `$HOME/.local/share/dongne` when XDG_DATA_HOME is not set (the XDG Base
    /// Directory Specification).
    public static var defaultDataDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let base = environment["XDG_DATA_HOME"], !base.isEmpty { return base + "/dongne" }
        return homeDirectory + "/.local/share/dongne"
    }

    /// `$HOME`, as shells and the XDG specification read it; the password file's entry only when it is unset or
    /// empty (Foundation's `NSHomeDirectory()` reads the password file first for root, whatever `$HOME` says).
    public static var homeDirectory: String {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        return NSHomeDirectory()
    }
}

/// The time source of a node, in milliseconds since the Unix epoch.
public struct NodeClock: Sendable {
    /// The current time.
    public let now: @Sendable () -> UInt64

    /// A clock reading `now`.
    public init(now: @escaping @Sendable () -> UInt64) { self.now = now }

    /// The system's wall clock.
    public static let system = NodeClock { UInt64(max(0, Date().timeIntervalSince1970 * 1_000)) }

    /// A clock that starts at `start` and moves `step` milliseconds forward at every reading: for tests and
    /// transcripts whose output must not depend on when they run.
    public static func stepping(from start: UInt64, by step: UInt64 = 1_000) -> NodeClock {
        let counter = SteppingCounter()
        return NodeClock { start + step * counter.next() }
    }
}

private final class SteppingCounter: Sendable {
    private let count = Atomic<UInt64>(0)

    func next() -> UInt64 {
        count.add(1, ordering: .relaxed).oldValue
    }
}
