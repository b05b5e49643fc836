import DongneStore
import Synchronization

/// Messages shown before their commit: received from peers, once known to be their authors', and this node's
/// own as soon as they are signed, until the store has committed them.
///
/// Listeners see a received message as soon as it is known to be its author's, not only once the store has
/// committed it (which, with its fsync, costs more than the check itself on a busy machine): snapshots and
/// reads merge these with what the store returns, and each leaves this set once its commit is visible, or
/// failed (then it disappears from listeners again, and the peer, which got no acknowledgement, sends it
/// again). A message that came straight from its author over a session that proved the author's key is held
/// at once, before its signature is checked (``add(authenticated:)``), and disappears again should the check
/// fail; any other once its signature holds. Only messages that would show plainly are held here (see
/// ``Store/arrivalShowing(of:by:)``, checked again at every merge); any other document waits for its commit.
/// A local message is held the same way, as a pending write (`hasPendingWrites`), so that its commit may wait
/// (see `Store.insert(_:deferrable:whenVisible:)`) while its listeners see it at once; should its commit fail,
/// it disappears again and the `send` throws.
final class ArrivingMessages: Sendable {
    /// A held message, and whether it is a local write (shown as pending).
    struct Arrival: Sendable {
        let id: DocumentID
        let author: PublicKey
        let created: UInt64
        let message: Message
        let isLocalWrite: Bool
    }

    /// By channel. A channel's table stays once made, even empty: made anew for each message, it would cost an
    /// allocation on every message's way to its listeners. There is one per channel this node has carried or
    /// posted in since it started (the core admits nothing from other channels).
    private let messages = Mutex<[ChannelID: [DocumentID: Arrival]]>([:])

    /// Holds the messages among these received documents until ``remove(_:)``, but those of `viewer` (this
    /// node's own, coming back from peers: stored here already, or on their way through ``addLocal(_:)``); the
    /// channels that got one.
    func add(_ documents: [Document], except viewer: PublicKey) -> Set<ChannelID> {
        hold(documents.filter { $0.author != viewer }.map(Self.fields), asLocalWrites: false)
    }

    /// Holds, until ``remove(unverified:)`` or until their checked copies leave, the messages among these
    /// documents that came straight from their authors over sessions that proved the authors' keys, before
    /// their signatures are checked (the session's MAC already tells they are the authors'): see
    /// `PeerNetwork.admit(_:)`. The channels that got one.
    func add(authenticated documents: [UnverifiedDocument]) -> Set<ChannelID> {
        hold(documents.map { ($0.id, $0.author, $0.created, $0.body) }, asLocalWrites: false)
    }

    /// Holds a local write until ``remove(_:)`` if it is a message; its channel, or none.
    func addLocal(_ document: Document) -> Set<ChannelID> {
        hold([Self.fields(document)], asLocalWrites: true)
    }

    /// Holds a placeholder message, shown as a pending local write until ``removePlaceholder(_:in:)``: a photo
    /// being prepared, which has no signed document yet.
    func addPlaceholder(id: DocumentID, author: PublicKey, created: UInt64, message: Message) {
        _ = hold([(id, author, created, .message(message))], asLocalWrites: true)
    }

    /// Forgets a placeholder.
    func removePlaceholder(_ id: DocumentID, in channel: ChannelID) {
        messages.withLock { $0[channel]?[id] = nil }
    }

    private static func fields(_ document: Document) -> HeldFields {
        (document.id, document.author, document.created, document.body)
    }

    private typealias HeldFields = (id: DocumentID, author: PublicKey, created: UInt64, body: DocumentBody)

    private func hold(_ documents: [HeldFields], asLocalWrites: Bool) -> Set<ChannelID> {
        messages.withLock { messages in
            var channels: Set<ChannelID> = []
            for document in documents {
                guard case .message(let message) = document.body else { continue }
                messages[message.channel, default: [:]][document.id] = Arrival(
                    id: document.id, author: document.author, created: document.created, message: message,
                    isLocalWrite: asLocalWrites)
                channels.insert(message.channel)
            }
            return channels
        }
    }

    /// Forgets these documents (committed, or failed to).
    func remove(_ documents: [Document]) {
        forget(documents.map { ($0.id, $0.body) })
    }

    /// Forgets these documents, held before their signatures were checked (which failed, or found them stored
    /// already); the channels they were held in.
    @discardableResult
    func remove(unverified documents: [UnverifiedDocument]) -> Set<ChannelID> {
        forget(documents.map { ($0.id, $0.body) })
    }

    @discardableResult
    private func forget(_ documents: [(id: DocumentID, body: DocumentBody)]) -> Set<ChannelID> {
        messages.withLock { messages in
            var channels: Set<ChannelID> = []
            for document in documents {
                guard case .message(let message) = document.body,
                    messages[message.channel]?.removeValue(forKey: document.id) != nil
                else { continue }
                channels.insert(message.channel)
            }
            return channels
        }
    }

    /// The name each author of a held message gave in their latest one, and when: who wrote what is on screen,
    /// before the store has the names.
    func latestNames() -> [PublicKey: DatedName] {
        messages.withLock { channels in
            var latest: [PublicKey: Arrival] = [:]
            for arrival in channels.values.flatMap(\.values) where (latest[arrival.author]?.created ?? 0) <= arrival.created {
                latest[arrival.author] = arrival
            }
            return latest.mapValues { DatedName(name: $0.message.senderName, created: $0.created) }
        }
    }

    /// The held messages of one channel.
    func messages(in channel: ChannelID) -> [Arrival] {
        messages.withLock { Array(($0[channel] ?? [:]).values) }
    }
}
