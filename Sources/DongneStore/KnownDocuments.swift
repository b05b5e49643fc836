import DongneCore
import Synchronization

/// What the store knows about its contents, kept in memory, so that a received message goes from its network
/// packet to listeners without a read of the database: a read right after another connection wrote costs tens
/// of microseconds (SQLite drops its page cache and locks the file), more than the message's signature check.
///
/// Every answer errs on one side only, the side that costs a query or a refresh, never the one that shows
/// something wrong: a stored id is always in ``storedIDs``, an id a stored report or retraction points at is
/// always in ``referencedIDs``, and an author who filed a report is always in the reporters. So each is noted
/// before the write that makes it true commits, and the filters answer "maybe" until the ids stored before the
/// store opened are loaded. The blocked authors follow the block list in the order its changes commit (an
/// unblock shows a moment early; the node recomputes its listeners after every change of the list).
///
/// This holds while this store's writer is the only one writing the file, as a node's store is.
final class KnownDocuments: Sendable {
    /// Every stored document id.
    let storedIDs: DocumentIDFilter
    /// Every id a stored document points at (reports, retractions, receipts).
    let referencedIDs: DocumentIDFilter
    private let reporters: Mutex<Set<PublicKey>>
    private let blocked: Mutex<Set<PublicKey>>
    private let loadingStopped = Mutex(false)

    /// Sized for about `documents` stored documents, with the reporters and blocked authors read from
    /// `connection`.
    init(documents: Int, connection: Connection) throws(SQLiteError) {
        storedIDs = DocumentIDFilter(capacity: 2 * documents)
        referencedIDs = DocumentIDFilter(capacity: documents / 4)
        reporters = Mutex(try Self.keys("SELECT DISTINCT reporter FROM reports", connection))
        blocked = Mutex(try Self.keys("SELECT author FROM blocks", connection))
    }

    /// Notes a document about to be stored, in the writer's transaction before it commits.
    func noteStoring(_ document: Document) {
        storedIDs.insert(document.id)
        if let reference = document.body.reference { referencedIDs.insert(reference) }
        if case .report = document.body { reporters.withLock { _ = $0.insert(document.author) } }
    }

    /// Notes a stored document that was there before the store opened.
    func noteStored(id: DocumentID, reference: DocumentID?) {
        storedIDs.insert(id)
        if let reference { referencedIDs.insert(reference) }
    }

    /// Ends a load under way at its next read (the store is closing).
    func stopLoading() {
        loadingStopped.withLock { $0 = true }
    }

    /// Every document stored before the store opened has been noted.
    func finishLoading() {
        storedIDs.finishLoading()
        referencedIDs.finishLoading()
    }

    /// Whether `author` has ever filed a report here (in any channel).
    func hasReported(_ author: PublicKey) -> Bool { reporters.withLock { $0.contains(author) } }

    /// Whether `author` is blocked (or about to be).
    func isBlocked(_ author: PublicKey) -> Bool { blocked.withLock { $0.contains(author) } }

    /// A block or an unblock, in the writer's transaction (see ``Store/block(_:since:)``).
    func setBlocked(_ author: PublicKey, _ isBlocked: Bool) {
        blocked.withLock { _ = isBlocked ? $0.insert(author).inserted : $0.remove(author) != nil }
    }

    /// The blocked authors as the database has them (after a change of the list failed to commit).
    func replaceBlocked(_ authors: Set<PublicKey>) {
        blocked.withLock { $0 = authors }
    }

    /// Notes every document of the database at `databasePath`, a few thousand per read, then lets the filters
    /// answer "no". Reads on a read-only connection of its own, so that the store's reads never wait for it; a
    /// read that fails, or ``stopLoading()``, leaves the filters answering "maybe".
    static func load(_ known: KnownDocuments, databasePath: String) {
        do {
            let connection = try Connection(path: databasePath, readOnly: true)
            var after: Int64 = 0
            while true {
                if known.loadingStopped.withLock({ $0 }) { return }
                let statement = try connection.statement(
                    "SELECT seq, id, ref FROM documents WHERE seq > ? ORDER BY seq LIMIT 4096"
                ).bind(.integer(after))
                var rows = 0
                while try statement.step() {
                    rows += 1
                    after = statement.integer(0)
                    guard let id = DocumentID(statement.blob(1)) else { continue }
                    known.noteStored(id: id, reference: DocumentID(statement.blob(2)))
                }
                if rows < 4096 { break }
            }
        } catch { return }
        known.finishLoading()
    }

    private static func keys(_ sql: String, _ connection: Connection) throws(SQLiteError) -> Set<PublicKey> {
        let statement = try connection.statement(sql)
        var keys: Set<PublicKey> = []
        while try statement.step() { if let key = PublicKey(statement.blob(0)) { keys.insert(key) } }
        return keys
    }
}
