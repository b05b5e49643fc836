import DongneStore
import Synchronization

/// Messages received from peers whose signatures hold, between that check and their commit to the store.
///
/// Listeners see a received message as soon as its signature holds, not only once the store has committed it
/// (which, with its fsync, costs more than the check itself on a busy machine): snapshots and reads merge these
/// with what the store returns, and each leaves this set once its commit is visible, or failed (then it
/// disappears from listeners again, and the peer, which got no acknowledgement, sends it again). Only messages
/// that would show plainly are held here (see ``Store/arrivalShowing(of:by:)``, checked again at every
/// merge); any other document waits for its commit.
final class ArrivingMessages: Sendable {
    private let messages = Mutex<[ChannelID: [DocumentID: (Document, Message)]]>([:])

    /// Holds these documents' messages until ``remove(_:)``; the channels that got one.
    func add(_ documents: [Document], except viewer: PublicKey) -> Set<ChannelID> {
        messages.withLock { messages in
            var channels: Set<ChannelID> = []
            for document in documents where document.author != viewer {
                guard case .message(let message) = document.body else { continue }
                messages[message.channel, default: [:]][document.id] = (document, message)
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

    /// The arriving messages of one channel.
    func messages(in channel: ChannelID) -> [(Document, Message)] {
        messages.withLock { Array(($0[channel] ?? [:]).values) }
    }
}
