import CSQLite

/// One SQLite connection. Not thread-safe: its owner confines it to one thread or guards it with a lock.
///
/// This file is the only one in DongneStore that holds SQLite's pointers; the rest speaks in Swift values.
final class Connection {
    private let handle: OpaquePointer
    private var cache: [String: Statement] = [:]

    /// Opens (or creates) the database file at `path`.
    init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        _ = Self.configureOnce
        var pointer: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &pointer, flags, nil)
        guard let pointer else { throw SQLiteError(extendedCode: result, message: "cannot allocate a connection") }
        guard result == SQLITE_OK else {
            let error = SQLiteError(extendedCode: result, message: String(cString: sqlite3_errmsg(pointer)))
            sqlite3_close_v2(pointer)
            throw error
        }
        handle = pointer
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5_000)
    }

    /// SQLite's process-wide settings, made before the first connection opens (Swift runs a static's initializer
    /// once, whichever thread comes first): no memory statistics, which dongne never reads and which would
    /// serialize every allocation of every connection on one mutex. Should SQLite be initialized already (another
    /// library of the process opened a database first), its settings stay; failing is harmless.
    private static let configureOnce: Void = { _ = dongne_sqlite_disable_memory_statistics() }()

    deinit {
        cache.removeAll()  // statements finalize first, then the connection can close
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw error(result, sql: sql) }
    }

    /// The prepared statement for `sql`, compiled once per connection and reset before it is handed out.
    func statement(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        var pointer: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard result == SQLITE_OK, let pointer else { throw error(result, sql: sql) }
        let statement = Statement(pointer, connection: self, sql: sql)
        cache[sql] = statement
        return statement
    }

    /// Resets every cached statement. A statement left on a row keeps its read transaction (and so an old
    /// snapshot of a WAL database) open; callers reset after each unit of work so later reads see new commits.
    func resetStatements() {
        for statement in cache.values { statement.reset() }
    }

    /// Whether a transaction is open. SQLite rolls a transaction back by itself after some errors (SQLITE_FULL,
    /// SQLITE_IOERR, SQLITE_NOMEM, …); this tells the writer when that happened.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The text in the first column of the first row of `sql` (for pragmas that answer with a word).
    func scalarText(_ sql: String) throws(SQLiteError) -> String {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : ""
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the row the last successful INSERT into a rowid table made.
    var lastInsertedRow: Int64 { sqlite3_last_insert_rowid(handle) }

    fileprivate func error(_ result: Int32, sql: String?) -> SQLiteError {
        SQLiteError(extendedCode: result, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}

/// A compiled statement: bind, step, read columns. Finalised when its connection drops it.
final class Statement {
    private let pointer: OpaquePointer
    private unowned let connection: Connection
    private let sql: String

    fileprivate init(_ pointer: OpaquePointer, connection: Connection, sql: String) {
        self.pointer = pointer
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(pointer) }

    func reset() {
        sqlite3_reset(pointer)
        sqlite3_clear_bindings(pointer)
    }

    /// Binds `values` to the parameters `?1`, `?2`, … in order.
    @discardableResult
    func bind(_ values: SQLValue...) throws(SQLiteError) -> Statement {
        try bind(values)
    }

    /// Binds `values` to the parameters `?1`, `?2`, … in order.
    @discardableResult
    func bind(_ values: [SQLValue]) throws(SQLiteError) -> Statement {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(pointer, index)
            case .integer(let number): result = sqlite3_bind_int64(pointer, index, number)
            case .text(let text): result = sqlite3_bind_text(pointer, index, text, -1, dongne_sqlite_transient())
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { buffer in
                    // A zero-length blob needs a non-null pointer, or SQLite stores NULL instead.
                    sqlite3_bind_blob(
                        pointer, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count),
                        dongne_sqlite_transient())
                }
            }
            guard result == SQLITE_OK else { throw connection.error(result, sql: sql) }
        }
        return self
    }

    /// Advances to the next row; false when there are no more.
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(pointer) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let result: throw connection.error(result, sql: sql)
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws(SQLiteError) {
        while try step() {}
    }

    /// The integer in column `index` of the current row.
    func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(pointer, index) }

    /// The text in column `index` of the current row (empty for NULL).
    func text(_ index: Int32) -> String {
        guard let characters = sqlite3_column_text(pointer, index) else { return "" }
        return String(cString: characters)
    }

    /// The bytes in column `index` of the current row (empty for NULL).
    func blob(_ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(pointer, index))
        guard count > 0, let base = sqlite3_column_blob(pointer, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// True when column `index` of the current row is NULL.
    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(pointer, index) == SQLITE_NULL }
}

/// A value bound to a statement parameter.
enum SQLValue {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}
