import DongneStore
import Synchronization

/// Messages shown before their commit: received from peers once their signatures hold, and this node's own
/// as soon as they are signed, until the store has committed them.
///
/// Listeners see a received message as soon as its signature holds, not only once the store has committed it
/// (which, with its fsync, costs more than the check itself on a busy machine): snapshots and reads merge these
/// with what the store returns, and each leaves this set once its commit is visible, or failed (then it
/// disappears from listeners again, and the peer, which got no acknowledgement, sends it again). Only messages
/// that would show plainly are held here (see ``Store/arrivalShowing(of:by:)``, checked again at every
/// merge); any other document waits for its commit. A local message is held the same way, as a pending write
/// (`hasPendingWrites`), so that its commit may wait (see `Store.insert(_:deferrable:whenVisible:)`) while its
/// listeners see it at once; should its commit fail, it disappears again and the `send` throws.
final class ArrivingMessages: Sendable {
    /// A held message, and whether it is a local write (shown as pending).
    struct Arrival: Sendable {
        let document: Document
        let message: Message
        let isLocalWrite: Bool
    }

    private let messages = Mutex<[ChannelID: [DocumentID: Arrival]]>([:])

    /// Holds the messages among these received documents until ``remove(_:)``, but those of `viewer` (this
    /// node's own, coming back from peers: stored here already, or on their way through ``addLocal(_:)``); the
    /// channels that got one.
    func add(_ documents: [Document], except viewer: PublicKey) -> Set<ChannelID> {
        hold(documents.filter { $0.author != viewer }, asLocalWrites: false)
    }

    /// Holds a local write until ``remove(_:)`` if it is a message; its channel, or none.
    func addLocal(_ document: Document) -> Set<ChannelID> {
        hold([document], asLocalWrites: true)
    }

    private func hold(_ documents: [Document], asLocalWrites: Bool) -> Set<ChannelID> {
        messages.withLock { messages in
            var channels: Set<ChannelID> = []
            for document in documents {
                guard case .message(let message) = document.body else { continue }
                messages[message.channel, default: [:]][document.id] = Arrival(
                    document: document, message: message, isLocalWrite: asLocalWrites)
                channels.insert(message.channel)
            }
            return channels
        }
    }

    /// Forgets these documents (committed, or failed to).
    func remove(_ documents: [Document]) {
        messages.withLock { messages in
            for document in documents {
                guard case .message(let message) = document.body else { continue }
                messages[message.channel]?[document.id] = nil
                if messages[message.channel]?.isEmpty == true { messages[message.channel] = nil }
            }
        }
    }

    /// The held messages of one channel.
    func messages(in channel: ChannelID) -> [Arrival] {
        messages.withLock { Array(($0[channel] ?? [:]).values) }
    }
}
