import DongneCore
import DongneStore
import Synchronization

/// What this run knows of its direct messages' photos beyond the store: the plain photo of each message it sent
/// or opened (known before the store's record of it is visible, so that a message shows its photo from the
/// moment it shows), the sealed photos being sent (not swept meanwhile), and the one pass that opens photos.
final class DirectPhotoMemory: Sendable {
    /// Messages remembered at most; beyond, the store answers.
    static let maximumRemembered = 4_096

    private struct State {
        var plain: [DocumentID: BlobHash] = [:]
        var sending: Set<BlobHash> = []
        /// Whether a pass runs, and whether another was asked for meanwhile.
        var opening = (running: false, again: false)
    }

    private let state = Mutex(State())

    /// Records that `message`'s photo is `plain` (sent, or opened here).
    func opened(_ message: DocumentID, holds plain: BlobHash) {
        state.withLock { state in
            if state.plain.count >= Self.maximumRemembered { state.plain.removeAll() }
            state.plain[message] = plain
        }
    }

    /// The plain photo of `message`, if this run sent or opened it.
    func plain(of message: DocumentID) -> BlobHash? { state.withLock { $0.plain[message] } }

    /// A sealed photo is being sent: stored before its envelope, which a stamp search may delay for seconds.
    func sending(_ sealed: BlobHash) { state.withLock { _ = $0.sending.insert(sealed) } }

    /// Its envelope is stored (or sending failed).
    func sent(_ sealed: BlobHash) { state.withLock { _ = $0.sending.remove(sealed) } }

    /// Sealed photos being sent: kept by a sweep, though no envelope names them yet.
    var beingSent: Set<BlobHash> { state.withLock { $0.sending } }

    /// Starts a pass of opening sealed photos; false when one runs (it is asked to go once more instead), so that
    /// one photo's bytes are in memory at a time.
    func beginOpening() -> Bool {
        state.withLock { state in
            guard !state.opening.running else {
                state.opening.again = true
                return false
            }
            state.opening = (true, false)
            return true
        }
    }

    /// A pass ended; true when another was asked for meanwhile (and is to run now).
    func endOpening() -> Bool {
        state.withLock { state in
            let again = state.opening.again
            state.opening = (again, false)
            return again
        }
    }
}
