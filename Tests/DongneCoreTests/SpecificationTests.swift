import DongneCore
import Foundation
import Testing

/// Keeps `Protocol/PROTOCOL.md` and the code saying the same numbers and rule names.
@Suite struct SpecificationTests {
    static let specification = try! String(
        contentsOf: VectorTests.packageRoot.appendingPathComponent("Protocol/PROTOCOL.md"), encoding: .utf8)

    /// The rows `| \`name\` | value | … |` of the table in the section whose heading starts with `heading`.
    static func table(in heading: String) -> [String: UInt64] {
        let section = specification.components(separatedBy: "### " + heading)[1].components(separatedBy: "###")[0]
        var rows: [String: UInt64] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            rows[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = UInt64(cells[1])
        }
        return rows
    }

    /// The rows of the limits table (§1.9).
    static func limitsTable() -> [String: UInt64] { table(in: "1.9 Limits") }

    @Test func theLimitsTableIsTheCodesLimits() {
        #expect(
            Self.limitsTable() == [
                "protocolVersion": DocumentLimits.protocolVersion,
                "maximumDocumentBytes": UInt64(DocumentLimits.maximumDocumentBytes),
                "maximumTextBytes": UInt64(DocumentLimits.maximumTextBytes),
                "maximumNameBytes": UInt64(DocumentLimits.maximumNameBytes),
                "maximumNoteBytes": UInt64(DocumentLimits.maximumNoteBytes),
                "maximumCreated": DocumentLimits.maximumCreated,
                "maximumClockSkew": DocumentLimits.maximumClockSkew,
                "maximumDepth": UInt64(CBORDecoder.maximumDepth),
            ])
    }

    @Test func theDirectSpaceTableIsTheCodes() {
        #expect(
            Self.table(in: "1.8 Direct messages") == [
                "retention": DirectSpace.retention, "hour": DirectSpace.hour,
                "maximumInnerBytes": UInt64(DirectSpace.maximumInnerBytes),
                "stampStrengthDiscount": UInt64(DirectSpace.stampStrengthDiscount),
                "maximumReceiptIDs": UInt64(DirectSpace.maximumReceiptIDs),
                "maximumStoredBytes": UInt64(DirectSpace.maximumStoredBytes),
                "photoBytesPerStampDoubling": UInt64(DirectSpace.photoBytesPerStampDoubling),
            ])
        #expect(Self.specification.contains("padded to 512, 2,048 or 8,192 bytes"))
        #expect(DirectSpace.paddedSizes == [512, 2_048, 8_192])
    }

    @Test func theHostBudgetsInTheSpecificationAreTheCoresDefaults() {
        let settings = PeerInstance.Settings()
        let rows = [
            "| connections in their handshake | \(settings.maximumHandshaking) in all, \(settings.maximumHandshakingPerHost) per host | a connection beyond the host's \(settings.maximumHandshakingPerHost) ",
            "| handshake deadline | \(settings.handshakeDeadline / 1_000) s |",
            "| new connections per host | \(Int(settings.hostConnectionBurst)) at once, then \(Int(settings.hostConnectionsPerSecond)) per second; a connection that ends before its handshake is done costs \(settings.failedHandshakeCost) more |",
            "| sessions | \(settings.maximumSessions) in all",
            "\(settings.maximumSessionsPerHost) per host |",
            "| malformed message | costs its host \(settings.malformedCost) refusals |",
            "| `reconcile` from an initiator | \(Int(settings.hostReconcileBurst)) at once, then \(Int(settings.hostReconcilesPerSecond)) per second, per host |",
            "| `request` | \(Int(settings.hostRequestBurst)) at once, then \(Int(settings.hostRequestsPerSecond)) per second, per host; ignored while the session holds \(settings.maximumRequestedUnacknowledged) documents or more unacknowledged |",
            "| messages over a budget | 1,000 per session |",
            "| remembered hosts | 4,096 |",
        ]
        for row in rows { #expect(Self.specification.contains(row), "\(row)") }
        #expect(settings.overBudgetLimit == 1_000 && settings.maximumRememberedHosts == 4_096)
        #expect(settings.refusalNoticeInterval == 10_000 && settings.hostRefusalsForgivenPerSecond == 1)
    }

    @Test func theBlobLimitsTableIsTheCodes() {
        #expect(
            Self.table(in: "3.3 Limits") == [
                "manifestVersion": BlobLimits.manifestVersion, "chunkBytes": UInt64(BlobLimits.chunkBytes),
                "maximumBlobBytes": UInt64(BlobLimits.maximumBlobBytes), "maximumChunks": UInt64(BlobLimits.maximumChunks),
                "maximumThumbnailBytes": UInt64(BlobLimits.maximumThumbnailBytes),
                "maximumImageSide": UInt64(BlobLimits.maximumImageSide),
                "maximumManifestBytes": UInt64(BlobLimits.maximumManifestBytes),
                "maximumDirectPhotoBytes": UInt64(BlobLimits.maximumDirectPhotoBytes),
                "maximumSealedPhotoBytes": UInt64(BlobLimits.maximumSealedPhotoBytes),
            ])
        for prefix in [BlobChunk.prefix, BlobManifest.prefix] { #expect(Self.specification.contains(Hex.encode(prefix))) }
    }

    @Test func theAdmissionTableIsTheCodesDefaults() {
        #expect(
            Self.table(in: "1.13 Admission") == [
                "IdentityStamp.defaultRequiredStrength": UInt64(IdentityStamp.defaultRequiredStrength),
                "IdentityStamp.maximumUsefulStrength": UInt64(IdentityStamp.maximumUsefulStrength),
                "AdmissionPolicy.defaultAuthorQuotaBytes": UInt64(AdmissionPolicy.defaultAuthorQuotaBytes),
                "AdmissionPolicy.maximumQuotaDoublings": UInt64(AdmissionPolicy.maximumQuotaDoublings),
            ])
    }

    @Test func thePrefixesInTheSpecificationAreTheCodes() {
        let prefixes = [
            Document.idPrefix, Document.signaturePrefix, ChannelName.idPrefix, IdentityStamp.prefix, DirectSpace.idPrefix,
            SealedPhoto.label,
        ]
        for prefix in prefixes {
            #expect(Self.specification.contains(Hex.encode(prefix)))
        }
    }

    /// One error of every case: adding a case to DocumentError or CBORError stops this from compiling until it
    /// is listed here, and so until its rule is checked against the specification.
    static func everyRule() -> [String] {
        func example(_ error: DocumentError) -> DocumentError {
            switch error {
            case .tooLarge, .encoding, .notAnEnvelope, .unsupportedVersion, .missingField, .unexpectedField, .wrongType,
                .wrongLength, .sizeOutOfRange, .emptyText, .textTooLong, .controlCharacter, .nonFiniteNumber,
                .latitudeOutOfRange, .longitudeOutOfRange, .createdOutOfRange, .messageContentCount,
                .channelNameNotNormalized, .channelIDMismatch, .badSignature, .badAuthenticator, .photoMismatch,
                .recipientKeyNotAPoint, .notAPaddedSize, .createdNotWholeHour:
                error
            }
        }
        func example(_ error: CBORError) -> CBORError {
            switch error {
            case .truncated, .trailingBytes, .nonShortestInteger, .nonShortestFloat, .unsortedOrDuplicateMapKey,
                .indefiniteLength, .unsupportedItem, .invalidUTF8, .nestedTooDeep:
                error
            }
        }
        let cbor: [CBORError] = [
            .truncated, .trailingBytes(count: 1), .nonShortestInteger, .nonShortestFloat, .unsortedOrDuplicateMapKey,
            .indefiniteLength, .unsupportedItem(initialByte: 0xc0), .invalidUTF8, .nestedTooDeep,
        ]
        let document: [DocumentError] = [
            .tooLarge(size: 0, limit: 0), .notAnEnvelope, .unsupportedVersion(2), .missingField(""),
            .unexpectedField(""), .wrongType(field: ""), .wrongLength(field: "", expected: 0, actual: 0),
            .sizeOutOfRange(field: "", size: 0, range: 0...0), .emptyText(field: ""),
            .textTooLong(field: "", bytes: 0, limit: 0), .controlCharacter(field: ""), .nonFiniteNumber(field: ""),
            .latitudeOutOfRange(0), .longitudeOutOfRange(0), .createdOutOfRange(0), .messageContentCount(0),
            .channelNameNotNormalized, .channelIDMismatch, .badSignature, .badAuthenticator, .photoMismatch,
            .recipientKeyNotAPoint, .notAPaddedSize(field: "", size: 0), .createdNotWholeHour(0),
        ]
        return cbor.map { example($0).rule } + document.map { example($0).rule }
    }

    @Test func everyRuleTheCodeCanNameIsInTheSpecification() {
        #expect(Set(Self.everyRule()).count == 33)
        for rule in Self.everyRule() { #expect(Self.specification.contains("`\(rule)`"), "\(rule)") }
    }

    @Test func everyRuleAReceiverAppliesHasAnInvalidVector() throws {
        let file = try VectorTests.load()
        let vectors = (file["invalid"] as! [[String: String]]) + (file["unopenable"] as! [[String: String]])
        let covered = Set(vectors.map { $0["rule"]! })
        let receiving = Set(Self.everyRule()).subtracting(["recipient-key-not-a-point"])  // a sender's rule
        #expect(receiving.subtracting(covered).isEmpty, "\(receiving.subtracting(covered))")
    }
}
