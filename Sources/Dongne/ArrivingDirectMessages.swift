import DongneStore
import Synchronization

/// Direct messages for this user shown before they are kept: opened as their envelope was received and checked,
/// until the inbox has written them among the user's messages (or the envelope's commit failed).
///
/// The same promise as ``ArrivingMessages`` for channels: a message shows as soon as it is known to be its
/// author's (here: the envelope opened with the user's key and the authenticator inside held; the envelope's
/// signature and the inner one are checked right after, see ``addUnchecked(_:envelope:)``), not after two
/// commits and their syncs. Reads merge these with what the store returns. Only a checked message is kept
/// (``checkedMessage(carriedBy:)``).
///
/// The user's own messages are held the same way while their commit waits (``addSent(_:)``).
///
/// A held message shown to the user is read from then on (``markRead(_:at:)``): kept as read, with its receipt
/// owed, when the inbox keeps it.
final class ArrivingDirectMessages: Sendable {
    private struct Held {
        /// Inner documents by the id of the envelope that carried them.
        var messages: [DocumentID: Document] = [:]
        /// When each held message that was shown was read, by the message's id.
        var read: [DocumentID: UInt64] = [:]
        /// Envelopes whose message shows before its signatures are checked (see ``addUnchecked(_:envelope:)``).
        var unchecked: Set<DocumentID> = []
        /// The user's own messages being sent, by id, shown as pending writes until their commit is visible.
        var sent: [DocumentID: Document] = [:]
    }

    private let held = Mutex(Held())

    /// Holds `message`, carried by `envelope`.
    func add(_ message: Document, envelope: DocumentID) {
        held.withLock { held in
            held.messages[envelope] = message
            held.unchecked.remove(envelope)
        }
    }

    /// Holds `message` before its signature and its envelope's are checked: its authenticator proved its author
    /// to this node already. ``checked(envelope:)`` or ``remove(carriedBy:)`` follows.
    func addUnchecked(_ message: Document, envelope: DocumentID) {
        held.withLock { held in
            held.messages[envelope] = message
            held.unchecked.insert(envelope)
        }
    }

    /// The message of `envelope` held before its checks, if any.
    func uncheckedMessage(carriedBy envelope: DocumentID) -> Document? {
        held.withLock { $0.unchecked.contains(envelope) ? $0.messages[envelope] : nil }
    }

    /// The envelopes among `envelopes` whose messages are held before their checks.
    func unchecked(among envelopes: [DocumentID]) -> [DocumentID] {
        held.withLock { held in envelopes.filter(held.unchecked.contains) }
    }

    /// The checks of `envelope` and its message held.
    func checked(envelope: DocumentID) { _ = held.withLock { $0.unchecked.remove(envelope) } }

    /// The held message carried by `envelope` once its checks passed, if any: the only one the inbox may keep.
    func checkedMessage(carriedBy envelope: DocumentID) -> Document? {
        held.withLock { $0.unchecked.contains(envelope) ? nil : $0.messages[envelope] }
    }

    /// The held message carried by `envelope`, if any.
    func message(carriedBy envelope: DocumentID) -> Document? { held.withLock { $0.messages[envelope] } }

    /// Marks the held messages among `ids` read at `time`; the ids that were held and unread.
    func markRead(_ ids: [DocumentID], at time: UInt64) -> [DocumentID] {
        held.withLock { held in
            let holding = Set(held.messages.values.map(\.id))
            return ids.filter { holding.contains($0) && held.read[$0] == nil }.map { id in
                held.read[id] = time
                return id
            }
        }
    }

    /// When a held message was read, if it was.
    func readTime(of id: DocumentID) -> UInt64? { held.withLock { $0.read[id] } }

    /// Lets go of the messages carried by these envelopes (kept now, or their envelopes not stored); whether any
    /// was held.
    @discardableResult
    func remove(carriedBy envelopes: [DocumentID]) -> Bool {
        held.withLock { held in
            envelopes.reduce(false) { removed, envelope in
                held.unchecked.remove(envelope)
                guard let message = held.messages.removeValue(forKey: envelope) else { return removed }
                held.read[message.id] = nil
                return true
            }
        }
    }

    /// Holds a message the user is sending, shown as a pending write until ``removeSent(_:)``: as a channel
    /// message is, so that its commit may wait a few milliseconds off its way.
    func addSent(_ message: Document) { held.withLock { $0.sent[message.id] = message } }

    /// Lets go of a message the user sent (its commit is visible, or failed).
    func removeSent(_ id: DocumentID) { _ = held.withLock { $0.sent.removeValue(forKey: id) } }

    /// The user's messages being sent, in no order.
    var sentMessages: [Document] { held.withLock { Array($0.sent.values) } }

    /// Every held message, in no order.
    var messages: [Document] { held.withLock { Array($0.messages.values) } }
}
