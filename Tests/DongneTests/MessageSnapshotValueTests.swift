import Testing

@testable import Dongne

/// `MessageSnapshot` keeps its fields in a shared box: it must still behave as a plain value. Two snapshots made
/// apart with the same fields are equal and hash alike; a snapshot changed with `with(...)` is a new value and
/// leaves the one it came from as it was.
@Suite struct MessageSnapshotValueTests {
    static let author = SigningKey(seed: [UInt8](repeating: 0x42, count: 32))!.publicKey
    static let channel = try! ChannelName(normalizing: "서울특별시").id

    static func snapshot(text: String = "안녕", pending: Bool = false, reports: Int = 0) -> MessageSnapshot {
        MessageSnapshot(
            id: DocumentID(Array(repeating: 7, count: 32))!, author: author, created: 1_796_142_840_000,
            message: Message(channel: channel, senderName: "준호", content: .text(text)),
            reportCount: reports, isActive: true,
            metadata: SnapshotMetadata(hasPendingWrites: pending, isFromCache: false))
    }

    @Test func snapshotsMadeApartWithTheSameFieldsAreEqualAndHashAlike() {
        let (first, second) = (Self.snapshot(), Self.snapshot())
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(Set([first, second]).count == 1)
    }

    @Test func anyFieldThatDiffersMakesThemUnequal() {
        let base = Self.snapshot()
        #expect(base != Self.snapshot(text: "안녕하세요"))
        #expect(base != Self.snapshot(pending: true))
        #expect(base != Self.snapshot(reports: 1))
    }

    @Test func aChangedSnapshotIsANewValueAndTheOriginalStaysAsItWas() {
        let original = Self.snapshot()
        let reported = original.with(
            reportCount: 3, isActive: false, metadata: SnapshotMetadata(hasPendingWrites: true, isFromCache: true))
        #expect(original.reportCount == 0 && original.isActive && !original.metadata.hasPendingWrites)
        #expect(reported.reportCount == 3 && !reported.isActive && reported.metadata.isFromCache)
        #expect(reported.id == original.id && reported.content == original.content)
        #expect(reported != original)
        #expect(!reported.hasSameData(as: original))
    }

    @Test func aSnapshotPrintsItsFieldsNotItsBox() {
        let printed = "\(Self.snapshot(text: "반가워요"))"
        #expect(printed.contains("반가워요") && printed.contains("준호") && printed.contains("reportCount: 0"))
        #expect(!printed.contains("Fields"))
    }

    @Test func aChangeToNothingKeepsTheSameValue() {
        let original = Self.snapshot()
        let same = original.with(reportCount: 0, isActive: true, metadata: original.metadata)
        #expect(same == original && same.hashValue == original.hashValue)
    }
}
