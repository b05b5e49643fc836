import DongneCore
public import Foundation

/// The test vector file `Protocol/vectors/session.json`: the default network key and an identity proof made
/// from fixed keys.
public enum SessionVectors {
    /// The file's relative path inside the package.
    public static let relativePath = "Protocol/vectors/session.json"

    /// The whole file.
    public static func render() throws -> Data {
        let identity = VectorKeys.alice
        let staticKey = NoiseKeyPair(privateKey: VectorKeys.seed(startingAt: 0xa0))
        let proof = IdentityProof(identity: identity, staticKey: staticKey.publicKey)
        let contents: [String: JSONValue] = [
            "about": .string(
                "dongne session test vectors (Protocol/PROTOCOL.md part 2). Byte strings are lowercase hex."),
            "networkKey": .object([
                "passphrase": .string(NetworkKey.defaultPassphrase), "salt": .string(Hex.encode(NetworkKey.salt)),
                "key": .string(Hex.encode(NetworkKey(passphrase: NetworkKey.defaultPassphrase)!.bytes)),
            ]),
            "identityProof": .object([
                "identitySeed": .string(Hex.encode(identity.seedBytes)),
                "identityPublicKey": .string(Hex.encode(identity.publicKey.bytes)),
                "staticPrivateKey": .string(Hex.encode(staticKey.privateKey)),
                "staticPublicKey": .string(Hex.encode(staticKey.publicKey)),
                "signedMessage": .string(Hex.encode(IdentityProof.prefix + staticKey.publicKey)),
                "proof": .string(Hex.encode(proof.bytes)),
            ]),
            "prologue": .string(Hex.encode(SecureSession.prologue)),
            "datagrams": datagrams(),
        ]
        return try JSONValue.render(JSONValue.object(contents))
    }

    /// Two datagrams from the initiator of a session with a fixed handshake hash (PROTOCOL.md §2.7).
    static func datagrams() -> JSONValue {
        let hash = (0..<64).map { UInt8($0) &* 3 }
        var channel = DatagramChannel(handshakeHash: hash, role: .initiator)
        let payloads = [Array("[0, 1, [], [h'…']]".utf8), [UInt8](repeating: 0xab, count: 40)]
        let index: UInt32 = 0x0102_0304
        return .object([
            "handshakeHash": .string(Hex.encode(hash)),
            "receiverIndex": .integer(UInt64(index)),
            "datagrams": .array(
                payloads.enumerated().map { counter, payload in
                    .object([
                        "counter": .integer(UInt64(counter)), "payload": .string(Hex.encode(payload)),
                        "datagram": .string(Hex.encode(channel.seal(payload, receiverIndex: index)!)),
                    ])
                }),
        ])
    }
}
