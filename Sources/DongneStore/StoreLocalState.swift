public import DongneCore
import Foundation
import DongneSystem

/// What is local and private to this node: the block list, joined channels, unacknowledged writes and settings.
/// None of it is ever sent.
extension Store {
    /// Blocks `author`: its documents stay stored (and relayed) but are not shown here, and its reports stop
    /// counting here.
    public func block(_ author: PublicKey, since: UInt64) async throws(StoreError) {
        try await changeBlock(of: author) { [known, reporterStanding] connection throws(SQLiteError) in
            try connection.statement("INSERT OR IGNORE INTO blocks (author, since) VALUES (?, ?)")
                .bind(.blob(author.bytes), .integer(Int64(since))).run()
            try connection.refreshReportCounts(reportedBy: author, cutoff: reporterStanding.cutoff)
            known.setBlocked(author, true)
        }
    }

    /// Lifts a block.
    public func unblock(_ author: PublicKey) async throws(StoreError) {
        try await changeBlock(of: author) { [known, reporterStanding] connection throws(SQLiteError) in
            try connection.statement("DELETE FROM blocks WHERE author = ?").bind(.blob(author.bytes)).run()
            try connection.refreshReportCounts(reportedBy: author, cutoff: reporterStanding.cutoff)
            known.setBlocked(author, false)
        }
    }

    /// Runs a change of the block list, which updates ``known`` in its transaction, so in the order the
    /// changes commit. Until the commit, memory runs ahead of the database: a caller recomputes its listeners
    /// after the call (as the node does), and a write that fails puts the database's list back into memory.
    private func changeBlock(
        of author: PublicKey, _ work: @escaping @Sendable (Connection) throws(SQLiteError) -> Void
    ) async throws(StoreError) {
        do { try await writeSQL(work) } catch {
            if let blocked = try? blockedAuthors() { known.replaceBlocked(blocked) }
            throw error
        }
    }

    /// Every blocked author key.
    public func blockedAuthors() throws(StoreError) -> Set<PublicKey> {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT author FROM blocks")
            var keys: Set<PublicKey> = []
            while try statement.step() { if let key = PublicKey(statement.blob(0)) { keys.insert(key) } }
            return keys
        }
    }

    /// Stores documents this node wrote, marked as pending until a peer acknowledges them. `whenVisible` as
    /// for ``insert(_:deferrable:whenVisible:)``.
    public func insertLocal(
        _ documents: [Document], whenVisible: (@Sendable () -> Void)? = nil
    ) async throws(StoreError) -> [InsertOutcome] {
        let result = await withCheckedContinuation { continuation in
            submitLocal(documents, whenVisible: whenVisible) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Queues documents this node wrote, marked as pending until a peer acknowledges them, and returns at once;
    /// `completion` hears once they are durably stored (or why not). An acknowledgement that arrives after this
    /// returned clears them, even if it comes before they are committed: send them only after queueing them.
    /// `deferrable` as for ``insert(_:deferrable:whenVisible:)``: for writes already shown to local listeners.
    public func submitLocal(
        _ documents: [Document], deferrable: Bool = false, whenVisible: (@Sendable () -> Void)? = nil,
        completion: @escaping @Sendable (Result<[InsertOutcome], StoreError>) -> Void
    ) {
        submitLocal(documents, deferrable: deferrable, whenVisible: whenVisible, alsoWriting: nil, completion: completion)
    }

    /// ``submitLocal(_:deferrable:whenVisible:completion:)``, with `alsoWriting` run in the same transaction
    /// after the documents are inserted.
    func submitLocal(
        _ documents: [Document], deferrable: Bool = false, whenVisible: (@Sendable () -> Void)? = nil,
        alsoWriting: (@Sendable (Connection) throws(SQLiteError) -> Void)?,
        completion: @escaping @Sendable (Result<[InsertOutcome], StoreError>) -> Void
    ) {
        pendingLocalWrites.update { pending in for document in documents { pending.insert(document.id) } }
        let committed = uncommittedLocalWrites.queue(documents.map(\.id))
        for document in documents {
            authorUsage.add(document.bytes.count, for: AuthorUsage.Key(document))
        }
        let outcomes = Locked<[InsertOutcome]>([])
        submit(rows: documents.count, deferrable: deferrable, whenVisible: {
            committed()
            whenVisible?()
        }) {
            [pendingLocalWrites, reconciliationCache, authorUsage] result in
            committed()  // also when it failed
            switch result {
            case .success:
                reconciliationCache.add(documents)
            case .failure:
                pendingLocalWrites.update { pending in for document in documents { pending.remove(document.id) } }
                for document in documents { authorUsage.forget(AuthorUsage.Key(document)) }
            }
            completion(result.map { outcomes.get() })
        } _: { [known, reporterStanding] connection throws(StoreError) in
            do throws(SQLiteError) {
                var results: [InsertOutcome] = []
                let (now, cutoff) = (reporterStanding.clock(), reporterStanding.cutoff)
                for document in documents {
                    known.noteStoring(document)
                    results.append(try connection.insert(document, at: now, cutoff: cutoff))
                    try connection.statement("INSERT OR IGNORE INTO pending_writes (id) VALUES (?)")
                        .bind(.blob(document.id.bytes)).run()
                }
                try alsoWriting?(connection)
                outcomes.set(results)
            } catch { throw .sqlite(error) }
        }
    }

    /// Counts the reports of posters whose standing came since the last call (all of them at the first): run it
    /// now and then, since standing comes with time, not with a write. Whether any message was recounted (its
    /// listeners may show it differently).
    public func recountMaturedReports() async throws(StoreError) -> Bool {
        let cutoff = reporterStanding.cutoff
        let earlier = recountedCutoff.get()
        guard cutoff > earlier || earlier == 0 else { return false }
        let recounted = Locked(0)
        try await writeSQL { connection throws(SQLiteError) in
            recounted.set(try connection.recountReports(standingAfter: earlier, by: cutoff))
        }
        recountedCutoff.set(cutoff)
        return recounted.get() > 0
    }

    /// Records that the user joined a channel (idempotent; the first join time stays).
    public func join(_ channel: ChannelName, at time: UInt64) async throws(StoreError) {
        try await writeSQL { connection throws(SQLiteError) in
            try connection.statement("INSERT OR IGNORE INTO joined_channels (id, name, joined) VALUES (?, ?, ?)")
                .bind(.blob(channel.id.bytes), .text(channel.value), .integer(Int64(time))).run()
        }
    }

    /// Records that the user left a channel. Its documents stay stored.
    public func leave(_ channel: ChannelID) async throws(StoreError) {
        try await writeSQL { connection throws(SQLiteError) in
            try connection.statement("DELETE FROM joined_channels WHERE id = ?").bind(.blob(channel.bytes)).run()
        }
    }

    /// The value of a local setting.
    public func setting(_ key: String) throws(StoreError) -> [UInt8]? {
        try read { connection throws(SQLiteError) -> [UInt8]? in
            let statement = try connection.statement("SELECT value FROM settings WHERE key = ?").bind(.text(key))
            return try statement.step() ? statement.blob(0) : nil
        }
    }

    /// Sets a local setting.
    public func setSetting(_ key: String, to value: [UInt8]) async throws(StoreError) {
        try await writeSQL { connection throws(SQLiteError) in
            try connection.statement("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)")
                .bind(.text(key), .blob(value)).run()
        }
    }

    /// Runs SQL in the writer's next transaction, turning SQLite's errors into the store's.
    func writeSQL(
        rows: Int = 1, deferrable: Bool = false, whenVisible: (@Sendable () -> Void)? = nil,
        _ work: @escaping @Sendable (Connection) throws(SQLiteError) -> Void
    ) async throws(StoreError) {
        try await write(rows: rows, deferrable: deferrable, whenVisible: whenVisible) { connection throws(StoreError) in
            do throws(SQLiteError) { try work(connection) } catch { throw .sqlite(error) }
        }
    }
}

extension Store {
    /// The display name a node in `directory` last used, read without starting it; nil when there is none.
    public static func savedDisplayName(inDataDirectory directory: String) throws(StoreError) -> String? {
        let path = directory + "/dongne.sqlite"
        guard access(path, F_OK) == 0 else { return nil }
        let store = try Store(path: path)
        defer { store.close() }
        return try store.setting("displayName").map { String(decoding: $0, as: UTF8.self) }
    }
}

extension Store {
    /// A peer stored these documents: those that were local writes are pending no more. Returns those.
    ///
    /// Most acknowledgements are for documents forwarded from others, never pending here: they are told apart in
    /// memory, and only the pending ones cost a write.
    public func acknowledge(_ ids: [DocumentID]) async throws(StoreError) -> [DocumentID] {
        try await clearPending(takePendingWrites(among: ids))
    }

    /// The local writes among `ids` that were pending, now pending no more in memory: the cheap, synchronous
    /// half of ``acknowledge(_:)``, for a caller that writes only when this returns some
    /// (``clearPending(_:)``).
    public func takePendingWrites(among ids: [DocumentID]) -> [DocumentID] {
        pendingLocalWrites.update { pending in ids.filter { pending.remove($0) != nil } }
    }

    /// Whether a local write is pending: no peer has acknowledged it yet (as far as this node knows now, in
    /// memory: the set ``takePendingWrites(among:)`` takes from).
    public func isPendingWrite(_ id: DocumentID) -> Bool {
        pendingLocalWrites.update { $0.contains(id) }
    }

    /// This node's pending writes in `channels`: the newest `limit` of them, oldest first, to send a peer again
    /// (its acknowledgement clears them). Nothing is read when nothing is pending, which is the common case: a
    /// peer acknowledges a write within milliseconds.
    public func pendingWriteDocuments(in channels: [ChannelID], limit: Int) throws(StoreError) -> [GossipDocument] {
        guard limit > 0, !channels.isEmpty, !pendingLocalWrites.update({ $0.isEmpty }) else { return [] }
        let found = try read { connection throws(SQLiteError) in
            var found: [(created: Int64, id: DocumentID, bytes: [UInt8])] = []
            // Driven from the pending writes, which are few: SQLite would otherwise walk the channel's index
            // newest first, and with fewer pending than `limit` read the whole channel to find them.
            let statement = try connection.statement(
                """
                SELECT d.created, d.id, d.bytes FROM pending_writes p CROSS JOIN documents d ON d.id = p.id
                WHERE d.channel = ? ORDER BY d.created DESC, d.id DESC LIMIT ?
                """)
            for channel in channels {
                statement.reset()
                try statement.bind(.blob(channel.bytes), .integer(Int64(limit)))
                while try statement.step() {
                    guard let id = DocumentID(statement.blob(1)) else { continue }
                    found.append((statement.integer(0), id, statement.blob(2)))
                }
            }
            return found
        }
        // Those whose acknowledgement is being written are pending no more.
        let pending = pendingLocalWrites.update { pending in found.filter { pending.contains($0.id) } }
        return pending.sorted { ($0.created, $0.id) < ($1.created, $1.id) }.suffix(limit).map {
            GossipDocument(id: $0.id, bytes: $0.bytes)
        }
    }

    /// Durably clears the pending state of local writes ``takePendingWrites(among:)`` returned; those it
    /// cleared.
    ///
    /// Deferrable, as a received message's insert is (``insert(_:deferrable:whenVisible:)``), when every one of
    /// them is committed already: it then rides in the next commit, or in one of its own after the writer's
    /// hold. A node sending a stream of messages gets each one's acknowledgements a few milliseconds after it
    /// sent it, about when it sends the next, and clearing them at once cost a commit and an fsync of their own
    /// on the way of that next message. Nothing but the pending flag waits for it (`hasPendingWrites`, which
    /// turns false that much later), and losing it in a crash only sends the writes once more. Should one of
    /// them still wait for its own commit (held, deferrable), the clearing commits at once and takes it along:
    /// the `send` that wrote it returns once it is on disk. Clearing more than a datagram's worth is never held
    /// (`GroupCommitWriter.deferrableRows`).
    public func clearPending(_ pending: [DocumentID]) async throws(StoreError) -> [DocumentID] {
        guard !pending.isEmpty else { return [] }
        let cleared = Locked<[DocumentID]>([])
        let allCommitted = uncommittedLocalWrites.noneOf(pending)
        try await writeSQL(rows: pending.count, deferrable: allCommitted) { connection throws(SQLiteError) in
            var done: [DocumentID] = []
            for id in pending {
                try connection.statement("DELETE FROM pending_writes WHERE id = ?").bind(.blob(id.bytes)).run()
                if connection.changes == 1 { done.append(id) }
            }
            cleared.set(done)
        }
        return cleared.get()
    }

    /// The channels the user joined.
    public func joinedChannels() throws(StoreError) -> Set<ChannelID> {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT id FROM joined_channels")
            var channels: Set<ChannelID> = []
            while try statement.step() { if let id = ChannelID(statement.blob(0)) { channels.insert(id) } }
            return channels
        }
    }
}
