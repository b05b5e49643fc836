/// A failed SQLite call: its result code, SQLite's own message, and the statement it ran, if any.
///
/// Callers match on ``code`` (the primary result code, e.g. `SQLITE_FULL` = 13) or on the named checks below.
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The primary result code (the low byte of ``extendedCode``).
    public var code: Int32 { extendedCode & 0xff }
    /// The extended result code SQLite reported.
    public let extendedCode: Int32
    /// SQLite's explanation.
    public let message: String
    /// The SQL that failed, when the failure belongs to a statement.
    public let sql: String?

    /// An error with the given result code.
    public init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// The disk or the database file reached its size limit (`SQLITE_FULL`).
    public var isDiskFull: Bool { code == 13 }
    /// The database file is damaged (`SQLITE_CORRUPT`) or is not a database (`SQLITE_NOTADB`).
    public var isCorrupt: Bool { code == 11 || code == 26 }

    /// One line for people: the code, the message and the SQL.
    public var description: String {
        let statement = sql.map { " in `\($0)`" } ?? ""
        return "SQLite error \(extendedCode): \(message)\(statement)"
    }
}
