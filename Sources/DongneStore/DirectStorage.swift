public import DongneCore
import DongneSystem

/// A direct message of this node's user, sent or received, as the store keeps it: the signed inner document,
/// apart from the envelopes of the space.
public struct DirectMessageRow: Sendable, Equatable {
    /// The signed `direct` document.
    public let document: Document
    /// The other party: the recipient of a sent message, the author of a received one.
    public let correspondent: PublicKey
    /// Whether this node's user sent it.
    public let isOutgoing: Bool
    /// A sent message whose envelope no peer has stored yet.
    public let isPending: Bool
    /// When the recipient saw it (received: when it was shown here; sent: when its receipt came), if it did.
    public let read: UInt64?

    /// A row.
    public init(document: Document, correspondent: PublicKey, isOutgoing: Bool, isPending: Bool, read: UInt64?) {
        self.document = document
        self.correspondent = correspondent
        self.isOutgoing = isOutgoing
        self.isPending = isPending
        self.read = read
    }
}

/// One conversation: the other party, its latest message and how many of its messages are unread.
public struct ConversationRow: Sendable, Equatable {
    /// The other party.
    public let correspondent: PublicKey
    /// The latest message, sent or received.
    public let latest: DirectMessageRow
    /// Received messages not shown yet.
    public let unreadCount: Int

    /// A row.
    public init(correspondent: PublicKey, latest: DirectMessageRow, unreadCount: Int) {
        self.correspondent = correspondent
        self.latest = latest
        self.unreadCount = unreadCount
    }
}

/// What opening new envelopes found for this node's user.
public struct OpenedMail: Sendable, Equatable {
    /// `direct` documents addressed to the user.
    public var messages: [Document] = []
    /// Receipts for messages the user sent, with their authors (the readers).
    public var receipts: [(reader: PublicKey, read: [DocumentID], at: UInt64)] = []

    /// Nothing found.
    public init() {}

    /// Whether nothing was found.
    public var isEmpty: Bool { messages.isEmpty && receipts.isEmpty }

    public static func == (lhs: OpenedMail, rhs: OpenedMail) -> Bool {
        lhs.messages == rhs.messages && lhs.receipts.count == rhs.receipts.count
            && zip(lhs.receipts, rhs.receipts).allSatisfy { $0.reader == $1.reader && $0.read == $1.read && $0.at == $1.at }
    }
}

extension Store {
    /// Queues a message this node's user sends and returns at once: its envelope as a pending local write
    /// (gossiped and reconciled like any document of the space) and the inner document among the user's direct
    /// messages, in one write. `whenVisible` hears when reads see it, `completion` once it is durable.
    /// `deferrable` as for ``insert(_:deferrable:whenVisible:)``: for a message already shown to local listeners.
    public func submitOwnDirect(
        _ inner: Document, envelope: Document, to recipient: PublicKey, plainPhoto: BlobHash? = nil,
        deferrable: Bool = false,
        whenVisible: (@Sendable () -> Void)? = nil,
        completion: @escaping @Sendable (Result<[InsertOutcome], StoreError>) -> Void
    ) {
        submitLocal([envelope], deferrable: deferrable, whenVisible: whenVisible, alsoWriting: { connection throws(SQLiteError) in
            try connection.statement(
                "INSERT OR IGNORE INTO direct_messages (id, correspondent, outgoing, created, envelope, bytes) "
                    + "VALUES (?, ?, 1, ?, ?, ?)"
            ).bind(
                .blob(inner.id.bytes), .blob(recipient.bytes), .integer(Int64(inner.created)),
                .blob(envelope.id.bytes), .blob(inner.bytes)
            ).run()
            try Self.recordDirectPhoto(of: inner, plain: plainPhoto, connection)
        }) { [directSpaceUsage] result in
            if case .success(let outcomes) = result, outcomes.first == .stored {
                directSpaceUsage.add(Self.spaceBytes(of: envelope))
            }
            completion(result)
        }
    }

    /// Stores a receipt's envelope as a pending local write and, in the same transaction, forgets that the
    /// messages it names are owed one: a receipt is sent once, and a crash sends it whole or not at all.
    public func insertReceipt(_ envelope: Document, for messages: [DocumentID]) async throws(StoreError) {
        let result = await withCheckedContinuation { continuation in
            submitLocal([envelope], alsoWriting: { connection throws(SQLiteError) in
                for id in messages {
                    try connection.statement("DELETE FROM receipts_due WHERE message = ?").bind(.blob(id.bytes)).run()
                }
            }) { continuation.resume(returning: $0) }
        }
        if case .success(let outcomes) = result, outcomes.first == .stored {
            directSpaceUsage.add(Self.spaceBytes(of: envelope))
        }
        _ = try result.get()
    }

    /// The envelopes stored after sequence number `sequence`, in arrival order, at most `limit`: the ones this
    /// node has not tried to open yet.
    public func envelopes(after sequence: Int64, limit: Int) throws(StoreError)
        -> [(sequence: Int64, id: DocumentID, box: SealedBox)]
    {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT seq, bytes FROM documents WHERE seq > ? AND channel = ? ORDER BY seq LIMIT ?"
            ).bind(.integer(sequence), .blob(DirectSpace.id.bytes), .integer(Int64(limit)))
            var found: [(Int64, DocumentID, SealedBox)] = []
            while try statement.step() {
                let sequence = statement.integer(0)
                guard let envelope = try? Document(reloadingVerified: statement.blob(1)),
                    case .sealed(let box) = envelope.body
                else { continue }
                found.append((sequence, envelope.id, box))
            }
            return found
        }
    }

    /// The sequence number up to which envelopes have been tried.
    public func envelopesTried() throws(StoreError) -> Int64 {
        guard let bytes = try setting(Self.envelopesTriedSetting), bytes.count == 8 else { return 0 }
        return Int64(bitPattern: bytes.reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// Keeps what opening envelopes up to sequence number `sequence` found, and that they were tried, in one
    /// write: new messages from others, and receipts that mark the user's sent messages read (only those sent
    /// to the receipt's author). Whether anything a conversation shows changed.
    ///
    /// `readBefore` holds messages the user was shown before they were kept (from memory, as they arrived), with
    /// when: they are kept as read, and owed a receipt if `sendingReceipts`.
    public func keepOpened(
        _ mail: OpenedMail, triedThrough sequence: Int64, readBefore: [DocumentID: UInt64] = [:],
        sendingReceipts: Bool = false
    ) async throws(StoreError) -> Bool {
        let changed = Locked(false)
        // Deferrable: what it keeps was shown from memory as it arrived, so it may share the next commit.
        try await writeSQL(deferrable: true) { connection throws(SQLiteError) in
            changed.set(false)  // a write's work may run twice (see `GroupCommitWriter`): this run's finding counts
            for message in mail.messages {
                let read = readBefore[message.id].map { SQLValue.integer(Int64($0)) } ?? .null
                try connection.statement(
                    "INSERT OR IGNORE INTO direct_messages (id, correspondent, outgoing, created, bytes, read) "
                        + "VALUES (?, ?, 0, ?, ?, ?)"
                ).bind(
                    .blob(message.id.bytes), .blob(message.author.bytes), .integer(Int64(message.created)),
                    .blob(message.bytes), read
                ).run()
                guard connection.changes > 0 else { continue }
                changed.set(true)
                try Self.recordDirectPhoto(of: message, plain: nil, connection)
                if sendingReceipts, readBefore[message.id] != nil {
                    try connection.statement("INSERT OR IGNORE INTO receipts_due (message, correspondent) VALUES (?, ?)")
                        .bind(.blob(message.id.bytes), .blob(message.author.bytes)).run()
                }
            }
            for receipt in mail.receipts {
                for id in receipt.read {
                    try connection.statement(
                        "UPDATE direct_messages SET read = ? WHERE id = ? AND correspondent = ? AND outgoing = 1 "
                            + "AND read IS NULL"
                    ).bind(.integer(Int64(receipt.at)), .blob(id.bytes), .blob(receipt.reader.bytes)).run()
                    if connection.changes > 0 { changed.set(true) }
                }
            }
            try Self.setEnvelopesTried(sequence, connection)
        }
        return changed.get()
    }

    /// Marks received messages read, as they were shown to the user at `time`; with `sendingReceipts`, notes
    /// that their authors are owed a receipt. The ids that were unread.
    public func markRead(_ ids: [DocumentID], at time: UInt64, sendingReceipts: Bool) async throws(StoreError)
        -> [DocumentID]
    {
        let marked = Locked<[DocumentID]>([])
        try await writeSQL { connection throws(SQLiteError) in
            var done: [DocumentID] = []
            for id in ids {
                try connection.statement(
                    "UPDATE direct_messages SET read = ? WHERE id = ? AND outgoing = 0 AND read IS NULL"
                ).bind(.integer(Int64(time)), .blob(id.bytes)).run()
                guard connection.changes > 0 else { continue }
                done.append(id)
                if sendingReceipts {
                    try connection.statement(
                        "INSERT OR IGNORE INTO receipts_due (message, correspondent) "
                            + "SELECT id, correspondent FROM direct_messages WHERE id = ?"
                    ).bind(.blob(id.bytes)).run()
                }
            }
            marked.set(done)
        }
        return marked.get()
    }

    /// The receipts owed: per correspondent, the ids of their messages shown and not yet acknowledged.
    public func receiptsDue() throws(StoreError) -> [PublicKey: [DocumentID]] {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT correspondent, message FROM receipts_due")
            var due: [PublicKey: [DocumentID]] = [:]
            while try statement.step() {
                guard let key = PublicKey(statement.blob(0)), let id = DocumentID(statement.blob(1)) else { continue }
                due[key, default: []].append(id)
            }
            return due
        }
    }

    /// Receipts were sent (or are no longer wanted) for these messages.
    public func clearReceiptsDue(_ ids: [DocumentID]) async throws(StoreError) {
        try await writeSQL { connection throws(SQLiteError) in
            for id in ids {
                try connection.statement("DELETE FROM receipts_due WHERE message = ?").bind(.blob(id.bytes)).run()
            }
        }
    }

    /// The messages exchanged with `correspondent`, oldest first; with `last`, only that many of the latest.
    public func directMessages(with correspondent: PublicKey, last: Int? = nil) throws(StoreError) -> [DirectMessageRow] {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT bytes, outgoing, read, envelope IN (SELECT id FROM pending_writes) FROM direct_messages "
                    + "WHERE correspondent = ? ORDER BY created DESC, id DESC LIMIT ?"
            ).bind(.blob(correspondent.bytes), .integer(Int64(last ?? -1)))
            var rows: [DirectMessageRow] = []
            while try statement.step() {
                if let row = Self.directRow(statement, correspondent: correspondent) { rows.append(row) }
            }
            return rows.reversed()
        }
    }

    /// Leaves one of this node's own envelopes out of reconciliation until ``releaseToReconciliation(_:)``: until
    /// its stem has spread it, a reconciliation would show that this node alone holds it.
    public func withholdFromReconciliation(_ id: DocumentID) { reconciliationCache.withhold(id) }

    /// Puts an envelope withheld by ``withholdFromReconciliation(_:)`` back into reconciliation.
    public func releaseToReconciliation(_ id: DocumentID) { reconciliationCache.release(id) }

    /// Whether `author` is blocked, from memory (the list is loaded when the store opens and kept with every
    /// block and unblock).
    public func isBlocked(_ author: PublicKey) -> Bool { known.isBlocked(author) }

    /// Whether the user's direct messages include `id`.
    public func hasDirectMessage(_ id: DocumentID) throws(StoreError) -> Bool {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT 1 FROM direct_messages WHERE id = ?").bind(.blob(id.bytes))
            defer { statement.reset() }
            return try statement.step()
        }
    }

    /// Every conversation but those with blocked people, the latest first.
    public func conversationRows() throws(StoreError) -> [ConversationRow] {
        let correspondents = try read { connection throws(SQLiteError) -> [PublicKey] in
            let statement = try connection.statement(
                "SELECT DISTINCT correspondent FROM direct_messages "
                    + "WHERE correspondent NOT IN (SELECT author FROM blocks)")
            var keys: [PublicKey] = []
            while try statement.step() { if let key = PublicKey(statement.blob(0)) { keys.append(key) } }
            return keys
        }
        var rows: [ConversationRow] = []
        for correspondent in correspondents {
            guard let latest = try directMessages(with: correspondent, last: 1).last else { continue }
            rows.append(ConversationRow(correspondent: correspondent, latest: latest, unreadCount: try unreadCount(with: correspondent)))
        }
        return rows.sorted {
            ($0.latest.document.created, $0.latest.document.id) > ($1.latest.document.created, $1.latest.document.id)
        }
    }

    private func unreadCount(with correspondent: PublicKey) throws(StoreError) -> Int {
        try read { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT count(*) FROM direct_messages WHERE correspondent = ? AND outgoing = 0 AND read IS NULL"
            ).bind(.blob(correspondent.bytes))
            return try statement.step() ? Int(statement.integer(0)) : 0
        }
    }

    private static func directRow(_ statement: Statement, correspondent: PublicKey) -> DirectMessageRow? {
        guard let document = try? Document(reloadingVerified: statement.blob(0)) else { return nil }
        let read = statement.isNull(2) ? nil : UInt64(statement.integer(2))
        return DirectMessageRow(
            document: document, correspondent: correspondent, isOutgoing: statement.integer(1) == 1,
            isPending: statement.integer(3) == 1, read: read)
    }

    /// Deletes the envelopes past their retention at `now` (PROTOCOL.md §1.8), and the sealed photos no envelope
    /// left names (but those in `keeping`: being sent); how many envelopes it deleted, and the photos. The user's
    /// own messages stay: they are kept apart, for as long as the user wants them.
    public func expireEnvelopesAndPhotos(
        at now: UInt64, keeping: @Sendable () -> Set<BlobHash> = { [] }
    ) async throws(StoreError)
        -> (envelopes: Int, photos: [BlobHash])
    {
        guard now >= DirectSpace.retention else { return (0, try await sweepSpacePhotos(keeping: keeping)) }
        let cutoff = Int64(now - DirectSpace.retention)
        let tried = try envelopesTried()
        let photoBytes = Locked(0)
        let deleted = Locked<(ids: [DocumentID], bytes: Int)>(([], 0))
        try await writeSQL { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT id, length(bytes) FROM documents WHERE channel = ? AND created < ?"
            ).bind(.blob(DirectSpace.id.bytes), .integer(cutoff))
            var found: (ids: [DocumentID], bytes: Int) = ([], 0)
            while try statement.step() {
                if let id = DocumentID(statement.blob(0)) { found.ids.append(id) }
                found.bytes += Int(statement.integer(1))
            }
            statement.reset()
            try connection.statement("DELETE FROM documents WHERE channel = ? AND created < ?")
                .bind(.blob(DirectSpace.id.bytes), .integer(cutoff)).run()
            // SQLite gives the highest sequence numbers out again once their rows are gone: the inbox's mark
            // comes back to the highest one left, so that no envelope stored later is passed over.
            let highest = try connection.scalarInteger("SELECT coalesce(max(seq), 0) FROM documents")
            if highest < tried { try Self.setEnvelopesTried(highest, connection) }
            for id in found.ids {
                try connection.statement("DELETE FROM pending_writes WHERE id = ?").bind(.blob(id.bytes)).run()
            }
            deleted.set(found)
            photoBytes.set(try Self.forgetSpacePhotos(before: cutoff, connection))
        }
        let (ids, bytes) = deleted.get()
        // Memory first: the documents are gone whatever becomes of the photos' bytes, which a later sweep deletes
        // if this one fails.
        reconciliationCache.remove(ids, from: DirectSpace.id)
        directSpaceUsage.add(-bytes - photoBytes.get())
        _ = takePendingWrites(among: ids)
        return (ids.count, (try? await sweepSpacePhotos(keeping: keeping)) ?? [])
    }

    /// How many envelopes the space holds here, and the bytes of the space's cap they take (with their photos).
    public func directSpaceSize() throws(StoreError) -> (envelopes: Int, bytes: Int) {
        (try documentCount(in: DirectSpace.id), directSpaceUsage.current)
    }

    private static func setEnvelopesTried(_ sequence: Int64, _ connection: Connection) throws(SQLiteError) {
        let counter = UInt64(bitPattern: sequence)
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64($0))) }
        try connection.statement("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)")
            .bind(.text(envelopesTriedSetting), .blob(bytes)).run()
    }

    private static let envelopesTriedSetting = "direct.envelopesTried"
}
