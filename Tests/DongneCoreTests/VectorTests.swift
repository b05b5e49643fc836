import DongneCore
import DongneVectors
import Foundation
import Testing

/// The published vectors: regenerated and compared byte for byte, then checked one by one.
@Suite struct VectorTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let file = packageRoot.appendingPathComponent(DocumentVectors.relativePath)

    static func load() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
    }

    @Test func vectorFileMatchesWhatTheCodeGeneratesToday() throws {
        let generated = try DocumentVectors.render()
        let committed = try Data(contentsOf: Self.file)
        #expect(
            generated == committed,
            "Protocol/vectors/documents.json drifted: run `swift run dongne-vectors` and review the diff")
    }

    @Test func sessionVectorFileMatchesWhatTheCodeGeneratesToday() throws {
        let committed = try Data(contentsOf: Self.packageRoot.appendingPathComponent(SessionVectors.relativePath))
        #expect(try SessionVectors.render() == committed, "run `swift run dongne-vectors` and review the diff")
    }

    @Test func blobVectorFileMatchesWhatTheCodeGeneratesTodayAndItsInvalidManifestsBreakTheirRules() throws {
        let url = Self.packageRoot.appendingPathComponent(BlobVectors.relativePath)
        #expect(try BlobVectors.render() == Data(contentsOf: url), "run `swift run dongne-vectors` and review the diff")
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        for vector in file["invalid"] as! [[String: String]] {
            do {
                _ = try BlobManifest(parsing: Hex.decode(vector["bytes"]!)!)
                Issue.record("\(vector["name"]!) was accepted")
            } catch { #expect(error.rule == vector["rule"], "\(vector["name"]!)") }
        }
    }

    @Test func everyInvalidVectorIsRejectedForItsStatedRule() throws {
        let invalid = try Self.load()["invalid"] as! [[String: String]]
        #expect(invalid.count >= 30)
        for vector in invalid {
            let bytes = Hex.decode(vector["bytes"]!)!
            do {
                _ = try Document(verifying: bytes)
                Issue.record("\(vector["name"]!) was accepted")
            } catch {
                #expect(error.rule == vector["rule"], "\(vector["name"]!): \(error)")
            }
        }
    }

    @Test func everyUnopenableEnvelopeIsAValidDocumentThatItsRecipientRefusesForItsStatedRule() throws {
        let file = try Self.load()
        let unopenable = file["unopenable"] as! [[String: String]]
        let keys = Dictionary(
            uniqueKeysWithValues: (file["keys"] as! [[String: Any]]).map { key in
                (key["name"] as! String, SigningKey(seed: Hex.decode(key["seed"] as! String)!)!)
            })
        #expect(!unopenable.isEmpty)
        for vector in unopenable {
            let envelope = try Document(verifying: Hex.decode(vector["bytes"]!)!)
            guard case .sealed(let box) = envelope.body, let recipient = keys[vector["sealedTo"]!] else {
                Issue.record("\(vector["name"]!) is not an envelope to a vector key")
                continue
            }
            guard case .invalid(let error) = DirectMessageKey(recipient).open(box, signature: .deferred) else {
                Issue.record("\(vector["name"]!) opened")
                continue
            }
            #expect(error.rule == vector["rule"], "\(vector["name"]!)")
        }
    }

    @Test func everyValidVectorVerifiesWithItsListedIdKeyAndSignature() throws {
        let valid = try Self.load()["valid"] as! [[String: Any]]
        let kinds = Set(valid.map { (($0["fields"] as! [String: Any])["kind"] as! NSNumber).uint64Value })
        #expect(kinds.isSuperset(of: DocumentKind.known.map(\.number)), "a vector for every kind")
        for vector in valid {
            let document = try Document(verifying: Hex.decode(vector["signed"] as! String)!)
            #expect(document.id.hex == vector["id"] as? String)
            #expect(Hex.encode(document.author.bytes) == vector["publicKey"] as? String)
            #expect(Hex.encode(document.signature.bytes) == vector["signature"] as? String)
            #expect(Hex.encode(document.bytes.dropFirst().dropLast(66)) == vector["unsigned"] as? String)
        }
    }
}
