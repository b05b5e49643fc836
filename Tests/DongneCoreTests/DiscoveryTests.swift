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
}
