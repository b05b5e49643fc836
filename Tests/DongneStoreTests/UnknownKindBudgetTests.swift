import DongneCore
import DongneStore
import Testing

/// Documents of kinds this version does not know are accepted (and so relayed) up to a byte budget shared by all
/// their authors: found by an attack in which 1,000 fresh keys sent 16 KB documents of an unknown kind and
/// filled the victim's and every honest node's disk at 7.5 MB/s.
@Suite struct UnknownKindBudgetTests {
    @Test func unknownKindsBeyondTheBudgetAreDeclinedAndKnownKindsStillStored() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(path: directory.file("dongne.sqlite"))
        // Fresh keys, each sending one document of ~15 KB: 2 MiB in all, twice the budget's burst.
        let flood = try (0..<140).map { n in
            let key = SigningKey(seed: [UInt8](repeating: UInt8(n), count: 31) + [0x77])!
            let padding = CBORMapEntry(.unsigned(9), .bytes([UInt8](repeating: UInt8(n), count: 15_000)))
            return try Document.sign(.unknown(kind: 77, channel: Keys.seoul.id, fields: [padding]), created: 1_000, by: key)
        }
        let results = await store.ingest(flood.map(\.bytes))
        let stored = results.filter { if case .success = $0 { true } else { false } }.count
        let declined = results.filter { if case .failure(.unknownKindBudgetSpent) = $0 { true } else { false } }.count
        #expect(stored == (1 << 20) / flood[0].bytes.count, "the burst: 1 MiB")
        #expect(declined == flood.count - stored)
        #expect(try await store.ingest(try message("평범한 글").bytes).1 == .stored)
    }
}
