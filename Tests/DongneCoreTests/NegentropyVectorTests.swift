// Goes to: Tests/DongneCoreTests/NegentropyVectorTests.swift (new file; uses VectorTests.packageRoot).
import Foundation
import Testing

@testable import DongneCore

/// `Protocol/vectors/negentropy.json`, made by an independent Python implementation of PROTOCOL.md §2.5.1 to
/// §2.5.7 (`Tests/python/negentropy_ref.py`): this implementation must write the same bytes, message by message,
/// with dongne's frame-size limit and millisecond timestamps above 2^31.
@Suite struct NegentropyVectorTests {
    /// The file, read once per test (a `[String: Any]` is not Sendable, so it is not kept in a static).
    static func load() throws -> [String: Any] {
        let url = VectorTests.packageRoot.appendingPathComponent("Protocol/vectors/negentropy.json")
        return try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
    }

    static func number(_ value: Any?) -> UInt64 { (value as! NSNumber).uint64Value }

    /// Item `index` of the generated sets, as the file's `generatedItems` (`described`) says.
    static func generated(_ index: Int, _ described: [String: Any]) -> NegentropyItem {
        let created =
            number(described["createdBase"]) + number(described["createdStep"])
            * UInt64(index / Int(number(described["itemsPerCreated"])))
        let id = Sodium.sha256(Array("\(described["idText"] as! String)\(index)".utf8))
        return NegentropyItem(timestamp: created, id: id)!
    }

    /// A set as the file writes it: explicit items and half-open ranges of generated item numbers.
    static func items(_ description: [String: Any], _ vectors: [String: Any]) -> [NegentropyItem] {
        let described = vectors["generatedItems"] as! [String: Any]
        var items = (description["items"] as? [[String: Any]] ?? []).map { item in
            NegentropyItem(timestamp: number(item["created"]), id: Hex.decode(item["id"] as! String)!)!
        }
        for range in description["generated"] as? [[NSNumber]] ?? [] {
            items += (range[0].intValue..<range[1].intValue).map { generated($0, described) }
        }
        return items
    }

    static func bytes(_ hex: Any?) -> [UInt8] { Hex.decode(hex as! String)! }

    @Test func dongneUsesTheFilesFrameSizeLimit() throws {
        #expect(Int(Self.number(try Self.load()["frameSizeLimit"])) == ReconciliationInstance.frameSizeLimit)
    }

    @Test func fingerprintsAndVarints() throws {
        let vectors = try Self.load()
        for vector in vectors["fingerprints"] as! [[String: Any]] {
            let ids = (vector["ids"] as? [String] ?? []).map { NegentropyItem(timestamp: 1, id: Hex.decode($0)!)! }
            let items = Self.items(vector, vectors) + ids
            #expect(Hex.encode(Negentropy.fingerprint(items[...])) == vector["fingerprint"] as! String)
        }
        for vector in vectors["varints"] as! [[String: Any]] {
            var writer = NegentropyWriter(version: nil)
            writer.varint(Self.number(vector["value"]))
            #expect(Hex.encode(writer.bytes) == vector["bytes"] as! String)
            var reader = NegentropyReader(Self.bytes(vector["bytes"]))
            #expect(try reader.varint() == Self.number(vector["value"]))
        }
    }

    /// Each case replayed: the initiator's first message, every responder's answer (from a fresh instance, as
    /// the responder of a dongne session keeps no state), every initiator's next message, then the end.
    @Test func everyCaseWritesTheSameBytes() throws {
        let vectors = try Self.load()
        let limit = Int(Self.number(vectors["frameSizeLimit"]))
        for vector in vectors["cases"] as! [[String: Any]] {
            let name = vector["name"] as! String
            let messages = (vector["messages"] as! [String]).map { Hex.decode($0)! }
            let responderItems = Self.items(vector["responder"] as! [String: Any], vectors)
            var initiator = Negentropy(
                items: Self.items(vector["initiator"] as! [String: Any], vectors), frameSizeLimit: limit)
            #expect(Hex.encode(initiator.initiate()) == Hex.encode(messages[0]), "\(name): the first message")
            var have = Set<[UInt8]>(), need = Set<[UInt8]>()
            for index in stride(from: 1, to: messages.count, by: 2) {
                var responder = Negentropy(items: responderItems, frameSizeLimit: limit)
                let answer = try responder.reconcile(messages[index - 1]).reply
                #expect(answer.map { Hex.encode($0) } == Hex.encode(messages[index]), "\(name): message \(index)")
                let result = try initiator.reconcile(messages[index])
                have.formUnion(result.have)
                need.formUnion(result.need)
                if index + 1 < messages.count {
                    #expect(
                        result.reply.map { Hex.encode($0) } == Hex.encode(messages[index + 1]),
                        "\(name): message \(index + 1)")
                } else {
                    #expect(result.reply == nil, "\(name): the initiator is complete after the last answer")
                }
            }
            #expect(have.map { Hex.encode($0) }.sorted() == vector["have"] as! [String], "\(name): have")
            #expect(need.map { Hex.encode($0) }.sorted() == vector["need"] as! [String], "\(name): need")
            #expect(messages.allSatisfy { $0.count <= limit }, "\(name): within the frame-size limit")
        }
    }

    @Test func otherVersionsAndUnreadableMessages() throws {
        let vectors = try Self.load()
        let versions = vectors["versions"] as! [String: Any]
        for vector in versions["answers"] as! [[String: Any]] {
            var responder = Negentropy(items: Self.items(versions, vectors))
            #expect(
                try responder.reconcile(Self.bytes(vector["message"])).reply.map { Hex.encode($0) }
                    == vector["answer"] as? String)
        }
        let failing = vectors["failing"] as! [String: Any]
        for vector in failing["messages"] as! [[String: Any]] {
            var responder = Negentropy(items: [])
            #expect(throws: NegentropyError.self, "\(vector["about"] as! String)") {
                try responder.reconcile(Self.bytes(vector["message"]))
            }
        }
    }
}
