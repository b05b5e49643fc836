import DongneCore
public import Foundation

/// The test vector file `Protocol/vectors/documents.json`: the same bytes on every run, so a test can regenerate
/// it and fail on any drift.
public enum DocumentVectors {
    /// The file's relative path inside the package.
    public static let relativePath = "Protocol/vectors/documents.json"

    /// The whole file.
    public static func render() throws -> Data {
        try JSONValue.render(JSONValue.object(try contents()))
    }

    static func contents() throws -> [String: JSONValue] {
        [
            "about": .string(
                "dongne document test vectors (Protocol/PROTOCOL.md). Byte strings are lowercase hex. "
                    + "Regenerate with: swift run dongne-vectors"),
            "prefixes": .object([
                "documentID": .string(Hex.encode(Document.idPrefix)),
                "signature": .string(Hex.encode(Document.signaturePrefix)),
                "channelID": .string(Hex.encode(ChannelName.idPrefix)),
                "identityStamp": .string(Hex.encode(IdentityStamp.prefix)),
                "directSpace": .string(Hex.encode(DirectSpace.idPrefix)),
            ]),
            "keys": .array(
                VectorKeys.named.map { name, key in
                    .object([
                        "name": .string(name), "seed": .string(Hex.encode(key.seedBytes)),
                        "publicKey": .string(Hex.encode(key.publicKey.bytes)),
                        "fingerprint": .string(key.publicKey.fingerprint.full),
                        "stamp": .string(Hex.encode(key.stamp!.bytes)),
                        "stampStrength": .integer(UInt64(key.stampStrength)),
                    ])
                }),
            "directSpace": .object([
                "id": .string(Hex.encode(DirectSpace.id.bytes)),
                "paddedSizes": .array(DirectSpace.paddedSizes.map { .integer(UInt64($0)) }),
                "wrapperSeed": .string(Hex.encode(VectorKeys.wrapper.seedBytes)),
                "ephemeralSeeds": .array([
                    .string(Hex.encode(VectorKeys.ephemeralSeeds.recipient)),
                    .string(Hex.encode(VectorKeys.ephemeralSeeds.author)),
                    .string(Hex.encode(VectorKeys.ephemeralSeeds.photo)),
                ]),
                "photoWrapperSeed": .string(Hex.encode(VectorKeys.photoWrapper.seedBytes)),
            ]),
            "channels": .array(try channelVectors()),
            "valid": .array(try ValidVectors.all().map { name, document in validVector(name, document) }),
            "invalid": .array(
                try InvalidVectors.all().map { name, rule, bytes in
                    .object(["name": .string(name), "rule": .string(rule), "bytes": .string(Hex.encode(bytes))])
                }),
            "unopenable": .array(
                try ValidVectors.unopenable().map { name, rule, recipient, document in
                    .object([
                        "name": .string(name), "rule": .string(rule), "sealedTo": .string(recipient),
                        "bytes": .string(Hex.encode(document.bytes)),
                    ])
                }),
        ]
    }

    private static func channelVectors() throws -> [JSONValue] {
        let inputs = [
            "서울특별시",
            "\u{1109}\u{1165}\u{110B}\u{116E}\u{11AF}\u{1110}\u{1173}\u{11A8}\u{1107}\u{1167}\u{11AF}\u{1109}\u{1175}",
            "  서울특별시\n", "경기도", "Café",
        ]
        return try inputs.map { input in
            let name = try ChannelName(normalizing: input)
            return .object([
                "input": .string(Hex.encode(input.utf8)), "normalized": .string(name.value),
                "id": .string(Hex.encode(name.id.bytes)),
            ])
        }
    }

    private static func validVector(_ name: String, _ document: Document) -> JSONValue {
        var vector: [String: JSONValue] = [
            "name": .string(name),
            "signed": .string(Hex.encode(document.bytes)),
            "unsigned": .string(Hex.encode(document.bytes[1..<(document.bytes.count - 66)])),
            "id": .string(document.id.hex),
            "publicKey": .string(Hex.encode(document.author.bytes)),
            "signature": .string(Hex.encode(document.signature.bytes)),
            "fields": .object(VectorFields.describe(document)),
        ]
        if let (inner, recipient) = ValidVectors.envelopeContents[name] {
            vector["sealedTo"] = .string(recipient)
            vector["inner"] = .string(inner)
        }
        return .object(vector)
    }
}
