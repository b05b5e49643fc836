import CSQLite
import DongneStore
import Testing

/// SQLite's process-wide settings, which the store makes before its first connection opens.
@Suite struct SQLiteSettingsTests {
    /// SQLite does not count its allocations: counting them takes one mutex for the whole process on every
    /// allocation of every connection, and nothing in dongne reads the counts. Were they counted, the memory that
    /// an open store's connections hold would show here.
    @Test func anOpenStoresAllocationsAreNotCounted() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("store.sqlite"))
        defer { store.close() }
        _ = try await store.insert(message("안녕하세요"))
        #expect(try store.documentCount() == 1)
        #expect(sqlite3_memory_used() == 0)
    }
}
