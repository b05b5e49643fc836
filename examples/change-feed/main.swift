import Dongne
import Foundation

// change-feed: prints a channel's changes as they happen, with their indexes — the Firestore listener model on a
// dongne node, using nothing but the public library.
//
//   swift run change-feed [--data DIR] [CHANNEL]     listen until Ctrl-C
//   swift run change-feed --demo                     write a little history into a fresh node and show it

let arguments = Array(CommandLine.arguments.dropFirst())
let demo = arguments.contains("--demo")
let dataIndex = arguments.firstIndex(of: "--data")
let directory =
    dataIndex.flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
    ?? (demo ? NSTemporaryDirectory() + "change-feed-" + UUID().uuidString : Configuration.defaultDataDirectory)
let channelName = arguments.last { !$0.hasPrefix("--") && $0 != directory } ?? "서울특별시"

func text(_ message: MessageSnapshot) -> String {
    switch message.content {
    case .text(let text): text
    case .location(let point): "location \(point.latitude), \(point.longitude)"
    case .photo(let hash): "photo \(hash)"
    }
}

var configuration = Configuration(dataDirectory: directory, displayName: "change-feed")
// The demo's node talks to no one: it skips mining the identity stamp peers would ask of it (a few seconds).
if demo { configuration.admission = .withoutStamps }
let node = try await Node.start(configuration)
let channel = try node.channel(named: channelName)
let printed = Counter()
// The last two messages, oldest first: watch messages enter and leave the window.
let registration = try channel.messages.order(by: .created).limit(toLast: 2).addSnapshotListener { snapshot, error in
    guard let snapshot else { return print("error: \(error.map { "\($0)" } ?? "?")") }
    print(
        "snapshot \(printed.next()): \(snapshot.count) messages, pending writes: \(snapshot.metadata.hasPendingWrites)")
    for change in snapshot.documentChanges {
        let type = "\(change.type)".padding(toLength: 8, withPad: " ", startingAt: 0)
        print("  \(type) old \(change.oldIndex)  new \(change.newIndex)  \(text(change.document))")
    }
}

if demo {
    try await printed.waitFor(1)
    for word in ["하나", "둘", "셋"] { try await channel.send(.text(word)) }
    let last = try await channel.messages.order(by: .created).limit(toLast: 1).getDocuments().documents[0]
    try await channel.retract(last.id)
    registration.remove()
    await node.stop()
    try? FileManager.default.removeItem(atPath: directory)
} else {
    print("listening to \(channel.name) in \(directory); Ctrl-C to stop")
    while true { try await Task.sleep(for: .seconds(3600)) }
}

/// Numbers snapshots, and lets the demo wait for the first one.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func next() -> Int {
        lock.withLock {
            count += 1; return count
        }
    }

    func waitFor(_ target: Int) async throws {
        while lock.withLock({ count }) < target { try await Task.sleep(for: .milliseconds(5)) }
    }
}
