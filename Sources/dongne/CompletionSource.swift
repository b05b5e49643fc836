import Synchronization

/// What Tab completes with, for the terminal console, which is made before the session it asks.
final class CompletionSource: Sendable {
    /// The session, once it exists.
    let session = Mutex<Session?>(nil)

    /// The candidates for `word` in `line` (none before the session exists).
    @Sendable func completions(line: String, word: String) -> [String] {
        session.withLock { $0 }?.completions(line: line, word: word) ?? []
    }

    /// Completes from `session` from now on.
    func use(_ session: Session) {
        self.session.withLock { $0 = session }
    }
}
