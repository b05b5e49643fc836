import Foundation
import Testing

@testable import DongneCore

/// Negentropy V1: byte-level vectors (Protocol/notes/negentropy-v1-examples.txt, computed with an independent
/// port of the reference implementation), and seeded reconciliations checked against the true differences.
@Suite struct NegentropyTests {
    static func item(_ timestamp: UInt64, _ id: [UInt8]) -> NegentropyItem {
        NegentropyItem(timestamp: timestamp, id: id)!
    }
    static func repeated(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }
    static func sha(_ byte: UInt8) -> [UInt8] { Sodium.sha256([byte]) }

    static let examples = try! String(
        contentsOf: VectorTests.packageRoot.appendingPathComponent("Protocol/notes/negentropy-v1-examples.txt"),
        encoding: .utf8)

    static func exampleHex(_ prefix: String) -> String {
        let line = examples.split(separator: "\n").first { $0.hasPrefix(prefix) }!
        return String(line.split(separator: " ").last!)
    }

    @Test func varintsAreMostSignificantGroupFirst() throws {
        for (value, hex) in [(0, "00"), (127, "7f"), (128, "8100"), (300, "822c"), (16_384, "818000"), (1_002, "876a")]
        {
            var writer = NegentropyWriter(version: nil)
            writer.varint(UInt64(value))
            #expect(Hex.encode(writer.bytes) == hex)
            var reader = NegentropyReader(writer.bytes)
            #expect(try reader.varint() == UInt64(value))
        }
    }

    @Test func fingerprintsMatchTheirVectors() {
        #expect(Hex.encode(Negentropy.fingerprint([][...])) == "7f9c9e31ac8256ca2f258583df262dbc")
        #expect(
            Hex.encode(Negentropy.fingerprint([Self.item(1, Self.repeated(0xaa))][...]))
                == "42b5d6e9a824e972398bfe0b80a84fb2")
        let three = [
            Self.item(1, Self.repeated(0xaa)), Self.item(1, Self.repeated(0xbb)), Self.item(1, Self.repeated(0xcc)),
        ]
        #expect(Hex.encode(Negentropy.fingerprint(three[...])) == "62d07ed5f99715371e7bee95b2d2d162")
        let wrap = [Self.item(1, Self.repeated(0xff)), Self.item(1, [1] + [UInt8](repeating: 0, count: 31))]
        #expect(Hex.encode(Negentropy.fingerprint(wrap[...])) == "58cc2f44d3a27866874701fbad573da9")
    }

    @Test func smallSetsTravelAsOneIdList() throws {
        var client = Negentropy(items: [
            Self.item(1_000, Self.repeated(0xaa)), Self.item(1_000, Self.repeated(0xbb)),
            Self.item(1_001, Self.repeated(0xcc)),
        ])
        var server = Negentropy(items: [
            Self.item(1_000, Self.repeated(0xaa)), Self.item(1_001, Self.repeated(0xcc)),
            Self.item(1_002, Self.repeated(0xdd)),
        ])
        let first = client.initiate()
        #expect(
            Hex.encode(first) == "6100000203"
                + Hex.encode(Self.repeated(0xaa) + Self.repeated(0xbb) + Self.repeated(0xcc)))
        let answer = try server.reconcile(first)
        let result = try client.reconcile(answer.reply!)
        #expect(result.reply == nil, "done in one round trip")
        #expect(result.have == [Self.repeated(0xbb)])
        #expect(result.need == [Self.repeated(0xdd)])
        var empty = Negentropy(items: [])
        #expect(Hex.encode(empty.initiate()) == "6100000200")
    }

    @Test func fortyItemsSplitIntoFingerprintedBucketsByteForByte() throws {
        let clientItems = (0..<40).map { Self.item(1_000 + UInt64($0 / 2), Self.sha(UInt8($0))) }
        let serverItems =
            clientItems.enumerated().filter { $0.offset != 7 && $0.offset != 20 }.map(\.element)
            + [Self.item(1_010, Self.sha(0x80)), Self.item(1_003, Self.sha(0x81))]
        var client = Negentropy(items: clientItems), server = Negentropy(items: serverItems)
        let first = client.initiate()
        #expect(Hex.encode(first) == Self.exampleHex("C->S"))
        let answer = try server.reconcile(first)
        #expect(Hex.encode(answer.reply!) == Self.exampleHex("S->C"))
        let result = try client.reconcile(answer.reply!)
        #expect(result.reply == nil)
        #expect(Set(result.have) == [Self.sha(7), Self.sha(20)])
        #expect(Set(result.need) == [Self.sha(0x80), Self.sha(0x81)])
    }

    @Test func aResponderAnswersOtherVersionsWithItsOwn() throws {
        var responder = Negentropy(items: [Self.item(12_345, Self.repeated(0xee))])
        #expect(Hex.encode(try responder.reconcile(Hex.decode("62aabbccddeeff")!).reply!) == "61")
        #expect(Hex.encode(try responder.reconcile(Hex.decode("6000000200")!).reply!) == "61")
        #expect(
            Hex.encode(try responder.reconcile(Hex.decode("6100000200")!).reply!) == "6100000201"
                + Hex.encode(Self.repeated(0xee)))
        #expect(throws: NegentropyError.invalidVersion(0x50)) { try responder.reconcile([0x50]) }
    }

    @Test("random sets reconcile to their exact differences", arguments: [0, 4_096])
    func randomSetsReconcile(frameSizeLimit: Int) throws {
        var random = SplitMix64(seed: UInt64(frameSizeLimit) + 11)
        for _ in 0..<20 {
            var mine: [NegentropyItem] = [], theirs: [NegentropyItem] = []
            for _ in 0..<Int.random(in: 0..<3_000, using: &random) {
                let item = Self.item(
                    UInt64.random(in: 0..<500, using: &random),
                    (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
                switch Int.random(in: 0..<10, using: &random) {
                case 0: mine.append(item)
                case 1: theirs.append(item)
                default: mine.append(item); theirs.append(item)
                }
            }
            var client = Negentropy(items: mine, frameSizeLimit: frameSizeLimit)
            var server = Negentropy(items: theirs, frameSizeLimit: frameSizeLimit)
            var message: [UInt8]? = client.initiate()
            var have = Set<[UInt8]>(), need = Set<[UInt8]>(), rounds = 0
            while let outgoing = message, rounds < 100 {
                if frameSizeLimit > 0 { #expect(outgoing.count <= frameSizeLimit) }
                let reply = try server.reconcile(outgoing).reply!
                if frameSizeLimit > 0 { #expect(reply.count <= frameSizeLimit) }
                let result = try client.reconcile(reply)
                have.formUnion(result.have)
                need.formUnion(result.need)
                message = result.reply
                rounds += 1
            }
            #expect(have == Set(mine.map(\.id)).subtracting(theirs.map(\.id)))
            #expect(need == Set(theirs.map(\.id)).subtracting(mine.map(\.id)))
        }
    }

    @Test func peersInSyncFinishInOneRoundTripWithFewBytes() throws {
        var random = SplitMix64(seed: 5)
        let items = (0..<100_000).map {
            Self.item(UInt64($0), (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        var client = Negentropy(items: items), server = Negentropy(items: items)
        let first = client.initiate()
        let reply = try server.reconcile(first).reply!
        #expect(try client.reconcile(reply).reply == nil)
        #expect(first.count + reply.count <= 1_024, "\(first.count) + \(reply.count) bytes")
    }

    @Test func malformedMessagesThrowAndNeverTrap() {
        var random = SplitMix64(seed: 9)
        var responder = Negentropy(items: (0..<50).map { Self.item(UInt64($0), Self.sha(UInt8($0))) })
        for _ in 0..<5_000 {
            let bytes =
                [0x61]
                + (0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = try? responder.reconcile(bytes)
        }
        #expect(throws: NegentropyError.truncated) { try responder.reconcile([0x61, 0x00]) }
        #expect(throws: NegentropyError.malformed) {
            try responder.reconcile([0x61, 0x00, 0x21] + [UInt8](repeating: 0, count: 33))
        }
        #expect(throws: NegentropyError.unknownMode(7)) { try responder.reconcile([0x61, 0x00, 0x00, 0x07]) }
    }
}
