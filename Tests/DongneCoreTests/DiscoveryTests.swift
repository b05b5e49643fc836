import DongneCore
import Testing

/// DNS-SD records (RFC 6763 §6) and what discovery does with what it finds.
@Suite struct DiscoveryTests {
    @Test func theRecordIsExactlyOneStringHoldingTheVersion() throws {
        #expect(ServiceTXT.record == [0x03] + Array("v=1".utf8))
        #expect(try ServiceTXT.parse(ServiceTXT.record) == ["v": "1"] as [String: String?])
        #expect(ServiceTXT.randomInstanceName() != ServiceTXT.randomInstanceName())
        #expect(ServiceTXT.randomInstanceName().wholeMatch(of: /dongne-[0-9a-f]{12}/) != nil)
    }

    @Test func parsingFollowsRFC6763() throws {
        let record: [UInt8] = [0x03] + Array("V=1".utf8) + [0x03] + Array("v=2".utf8) + [0x00] + [0x04] + Array("flag".utf8)
        let expected: [String: String?] = ["v": "1", "flag": nil as String?]
        #expect(try ServiceTXT.parse(record) == expected, "keys fold case; the first wins; a key may have no value")
        #expect(try ServiceTXT.parse([]).isEmpty)
        #expect(throws: ServiceTXT.TXTError.malformed) { try ServiceTXT.parse([0x05, 0x76]) }
        #expect(throws: ServiceTXT.TXTError.malformed) { try ServiceTXT.parse([0x02] + Array("=1".utf8)) }
        #expect(throws: ServiceTXT.TXTError.malformed) { try ServiceTXT.parse([0x03, 0x01, 0x3d, 0x31]) }
        #expect(throws: ServiceTXT.TXTError.missingVersion) { try ServiceTXT.check([0x01, 0x76]) }
        #expect(throws: ServiceTXT.TXTError.unknownVersion("2")) {
            try ServiceTXT.check([0x03] + Array("v=2".utf8))
        }
    }

    @Test func foundServicesAreDialledAndForgottenAndBadOnesLoggedOnce() {
        var directory = DiscoveryDirectory(ownInstance: "dongne-000000000001")
        let good = ServiceTXT.record
        #expect(
            directory.handle(.resolved(instance: "dongne-000000000001", host: "10.0.0.1", port: 4747, txt: good))
                .isEmpty, "never itself")
        #expect(
            directory.handle(.resolved(instance: "b", host: "10.0.0.2", port: 4747, txt: good)) == [
                .connect(host: "10.0.0.2", port: 4747)
            ])
        #expect(directory.handle(.resolved(instance: "b", host: "10.0.0.2", port: 4747, txt: good)).isEmpty)
        #expect(
            directory.handle(.resolved(instance: "b", host: "10.0.0.3", port: 4747, txt: good)) == [
                .forget(host: "10.0.0.2", port: 4747), .connect(host: "10.0.0.3", port: 4747),
            ], "a service that moved")
        #expect(directory.handle(.lost(instance: "b")) == [.forget(host: "10.0.0.3", port: 4747)])
        let future = [UInt8(3)] + Array("v=2".utf8)
        let first = directory.handle(.resolved(instance: "c", host: "10.0.0.4", port: 4747, txt: future))
        #expect(first == [.log("DNS-SD: ignoring service c: protocol version 2, not 1")])
        #expect(directory.handle(.resolved(instance: "c", host: "10.0.0.4", port: 4747, txt: future)).isEmpty)
        #expect(directory.handle(.unresolvable(instance: "d", host: "d.local")).count == 1)
        #expect(directory.handle(.unresolvable(instance: "d", host: "d.local")).isEmpty)
    }

    @Test func aMissingDaemonIsSaidOnceAndItsReturnOnce() {
        var directory = DiscoveryDirectory(ownInstance: "a")
        #expect(directory.handle(.daemonUnavailable(reason: "no daemon")).count == 1)
        #expect(directory.handle(.daemonUnavailable(reason: "no daemon")).isEmpty)
        #expect(directory.handle(.daemonAvailable) == [.log("DNS-SD available again")])
        #expect(directory.handle(.daemonAvailable).isEmpty)
    }

    /// A host may announce thousands of services for nothing: the directory keeps a bounded number, names a
    /// bounded number of those it ignores, and says each overflow once.
    @Test func aFloodOfServicesCostsABoundedDirectoryAndAFewLines() {
        var directory = DiscoveryDirectory(ownInstance: "own")
        let good = ServiceTXT.record
        var directives: [DiscoveryDirectory.Directive] = []
        for number in 0..<(DiscoveryDirectory.maximumServices + 100) {
            let host = "10.1.\(number / 250).\(number % 250 + 1)"
            directives += directory.handle(.resolved(instance: "flood-\(number)", host: host, port: 4747, txt: good))
        }
        let connects = directives.filter { if case .connect = $0 { true } else { false } }
        #expect(connects.count == DiscoveryDirectory.maximumServices)
        #expect(directory.known.count == DiscoveryDirectory.maximumServices)
        #expect(directives.filter { if case .log = $0 { true } else { false } }.count == 1, "said once")
        // One goes away: a service announced after it takes its place, and a new overflow is said again.
        #expect(directory.handle(.lost(instance: "flood-0")) == [.forget(host: "10.1.0.1", port: 4747)])
        #expect(
            directory.handle(.resolved(instance: "late", host: "10.2.0.1", port: 4747, txt: good)) == [
                .connect(host: "10.2.0.1", port: 4747)
            ])
        #expect(directory.handle(.resolved(instance: "later", host: "10.2.0.2", port: 4747, txt: good)).count == 1)
        #expect(directory.handle(.resolved(instance: "latest", host: "10.2.0.3", port: 4747, txt: good)).isEmpty)

        var lines: [DiscoveryDirectory.Directive] = []
        for number in 0..<1_000 {
            lines += directory.handle(.unresolvable(instance: "nowhere-\(number)", host: "nowhere.local"))
        }
        #expect(lines.count == DiscoveryDirectory.maximumNamedIgnored + 1)
        #expect(lines.last == .log("DNS-SD: ignoring many more services; no longer naming each"))
    }

    @Test func servicesTheShellCouldNotResolveAreSaidOnceUntilTheDaemonReturns() {
        var directory = DiscoveryDirectory(ownInstance: "a")
        #expect(directory.handle(.tooManyToResolve).count == 1)
        #expect(directory.handle(.tooManyToResolve).isEmpty)
        _ = directory.handle(.daemonUnavailable(reason: "gone"))
        _ = directory.handle(.daemonAvailable)
        #expect(directory.handle(.tooManyToResolve).count == 1)
    }
}
