import Dongne
import Testing

@testable import dongne

/// How the REPL turns what a user typed into a key: names are labels, and a ground key must not win.
@Suite struct PeopleTests {
    static let mike = SigningKey(seed: [UInt8](repeating: 0x31, count: 32))!.publicKey
    static let other = SigningKey(seed: [UInt8](repeating: 0x32, count: 32))!.publicKey

    @Test func aNameThatIsAlsoAnotherKeysFingerprintPrefixIsRefused() {
        // The other key's fingerprint starts with what mike is called: as if someone ground a look-alike key.
        let lookAlike = String(Self.other.fingerprint.full.prefix(5))
        let known = [Self.mike: lookAlike, Self.other: "someone"]
        guard case .failure(let error) = People.resolve(lookAlike, among: known) else {
            Issue.record("an ambiguous query resolved")
            return
        }
        #expect(
            error.message.contains(Self.mike.fingerprint.short) && error.message.contains(Self.other.fingerprint.short))
    }

    @Test func aUniqueNameOrALongEnoughPrefixResolves() throws {
        let known = [Self.mike: "mike", Self.other: "지수"]
        #expect(try People.resolve("지수", among: known).get() == Self.other)
        #expect(try People.resolve(String(Self.mike.fingerprint.full.prefix(6)), among: known).get() == Self.mike)
        #expect(throws: CommandError.self) { try People.resolve("abc", among: known).get() }
    }

    @Test func aNameMatchesWhateverItsCaseWhenThatIsUnambiguous() throws {
        #expect(try People.resolve("MIKE", among: [Self.mike: "Mike", Self.other: "지수"]).get() == Self.mike)
        let twins = [Self.mike: "Mike", Self.other: "mike"]
        #expect(try People.resolve("mike", among: twins).get() == Self.other, "the exact name wins")
        #expect(throws: CommandError.self) { try People.resolve("MIKE", among: twins).get() }
    }

    @Test func aFingerprintPrefixThatIsTooShortSaysSo() {
        let prefix = String(Self.mike.fingerprint.full.prefix(3))
        guard case .failure(let error) = People.resolve(prefix, among: [Self.mike: "mike"]) else {
            Issue.record("a 3-character prefix resolved")
            return
        }
        #expect(error.message == "a fingerprint prefix needs at least 4 characters; \(prefix) has 3")
    }

    @Test func aWholeFingerprintNamesItsKeyEvenIfNoOneKnowsIt() throws {
        let grouped = Self.other.fingerprint.grouped.uppercased()
        #expect(try People.resolve(grouped, among: [Self.mike: "mike"]).get() == Self.other)
        #expect(Fingerprint.publicKey(from: String(Self.other.fingerprint.full.dropLast()) + "9") == nil, "padding bits")
        #expect(Fingerprint.publicKey(from: "0" + Self.other.fingerprint.full.dropFirst()) == nil, "not the alphabet")
    }

    @Test func distinctKeysShowTheirShortFingerprint() {
        let shown = People.displayedFingerprint(of: Self.mike, among: [Self.mike, Self.other])
        #expect(shown == Self.mike.fingerprint.short)
    }
}
