import DongneCore
import Foundation
import Testing

/// Keeps `Protocol/PROTOCOL.md` and the code saying the same numbers and rule names.
@Suite struct SpecificationTests {
    static let specification = try! String(
        contentsOf: VectorTests.packageRoot.appendingPathComponent("Protocol/PROTOCOL.md"), encoding: .utf8)

    /// The rows `| \`name\` | value | … |` of the limits table.
    static func limitsTable() -> [String: UInt64] {
        let section = specification.components(separatedBy: "### 1.9 Limits")[1].components(separatedBy: "###")[0]
        var limits: [String: UInt64] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            limits[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = UInt64(cells[1])
        }
        return limits
    }

    @Test func theLimitsTableIsTheCodesLimits() {
        #expect(Self.limitsTable() == [
            "protocolVersion": DocumentLimits.protocolVersion,
            "maximumDocumentBytes": UInt64(DocumentLimits.maximumDocumentBytes),
            "maximumTextBytes": UInt64(DocumentLimits.maximumTextBytes),
            "maximumNameBytes": UInt64(DocumentLimits.maximumNameBytes),
            "maximumNoteBytes": UInt64(DocumentLimits.maximumNoteBytes),
            "minimumSealedBytes": UInt64(DocumentLimits.minimumSealedBytes),
            "maximumSealedBytes": UInt64(DocumentLimits.maximumSealedBytes),
            "maximumCreated": DocumentLimits.maximumCreated,
            "maximumDepth": UInt64(CBORDecoder.maximumDepth),
        ])
    }

    @Test func thePrefixesInTheSpecificationAreTheCodes() {
        for prefix in [Document.idPrefix, Document.signaturePrefix, ChannelName.idPrefix] {
            #expect(Self.specification.contains(Hex.encode(prefix)))
        }
    }

    @Test func everyRuleTheCodeCanNameIsInTheSpecification() throws {
        let vectors = try VectorTests.load()["invalid"] as! [[String: String]]
        let rules = Set(vectors.map { $0["rule"]! })
        for rule in rules { #expect(Self.specification.contains("`\(rule)`"), "\(rule)") }
    }
}
