import DongneCore
public import Foundation

/// The test vector file `Protocol/vectors/session.json`: the default network key, an identity proof, a whole
/// session opening and the first rekeying, all made from fixed keys, and datagrams.
public enum SessionVectors {
    /// The file's relative path inside the package.
    public static let relativePath = "Protocol/vectors/session.json"

    /// The whole file.
    public static func render() throws -> Data {
        let identity = VectorKeys.alice
        let staticKey = NoiseKeyPair(privateKey: VectorKeys.seed(startingAt: 0xa0))
        let proof = IdentityProof(identity: identity, staticKey: staticKey.publicKey)
        // Derived here, not the node's constant: the vectors check the Argon2id step independently.
        let networkKey = NetworkKey.derived(fromPassphrase: NetworkKey.defaultPassphrase)!
        let (handshake, rekey) = session(networkKey: networkKey)
        let contents: [String: JSONValue] = [
            "about": .string(
                "dongne session test vectors (Protocol/PROTOCOL.md part 2). Byte strings are lowercase hex."),
            "networkKey": .object([
                "passphrase": .string(NetworkKey.defaultPassphrase), "salt": .string(Hex.encode(NetworkKey.salt)),
                "key": .string(Hex.encode(networkKey.bytes)),
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
            "handshake": handshake,
            "rekey": rekey,
            "datagrams": datagrams(),
            "membership": .array(membership().map { name, message in
                .object(["name": .string(name), "bytes": .string(Hex.encode(message.wireBytes))])
            }),
        ]
        return try JSONValue.render(JSONValue.object(contents))
    }

    /// The messages of partial views (PROTOCOL.md §2.9), as a node sends them; an empty host is the sender's.
    static func membership() -> [(String, GossipMessage)] {
        let sender = PeerAddress(host: "", port: 4_747)
        let (a, b) = (PeerAddress(host: "10.77.0.2", port: 4_747), PeerAddress(host: "192.168.1.30", port: 50_001))
        return [
            ("listening", .listening(port: 4_747)),
            ("join", .membership(.join)),
            ("forward-join", .membership(.forwardJoin(a, timeToLive: 6))),
            ("neighbour-urgent", .membership(.neighbour(urgent: true))),
            ("neighbour-reply-refused", .membership(.neighbourReply(accepted: false))),
            ("disconnect", .membership(.disconnect)),
            ("shuffle", .membership(.shuffle(origin: sender, timeToLive: 6, addresses: [a, b]))),
            ("shuffle-reply", .membership(.shuffleReply([b]))),
            ("only-neighbour", .membership(.onlyNeighbour(true))),
        ]
    }

    /// The parties of the `handshake` vector: alice dials (the Noise initiator), bob answers; static keys a0…bf
    /// (the identity proof's) and c0…df, ephemeral keys e0…ff and ff…e0.
    static let parties: [(role: String, identity: SigningKey, staticKey: NoiseKeyPair, ephemeral: NoiseKeyPair)] = [
        (
            "initiator", VectorKeys.alice, NoiseKeyPair(privateKey: VectorKeys.seed(startingAt: 0xa0)),
            NoiseKeyPair(privateKey: VectorKeys.seed(startingAt: 0xe0))
        ),
        (
            "responder", VectorKeys.bob, NoiseKeyPair(privateKey: VectorKeys.seed(startingAt: 0xc0)),
            NoiseKeyPair(privateKey: (0..<32).map { 0xff - UInt8($0) })
        ),
    ]

    /// A whole session opening with fixed keys (PROTOCOL.md §2.2, §2.3): the three handshake frames, the
    /// responder's identity proof, one transport message each way; then the responder's messages 65,536 and
    /// 65,537 around its direction's first REKEY. `Tests/python/session_vectors.py` makes the same with
    /// noiseprotocol.
    static func session(networkKey: NetworkKey) -> (handshake: JSONValue, rekey: JSONValue) {
        let (alice, bob) = (parties[0], parties[1])
        var initiator = SecureSession(
            role: .initiator, identity: alice.identity, networkKey: networkKey, staticKey: alice.staticKey,
            ephemeral: alice.ephemeral)
        var responder = SecureSession(
            role: .responder, identity: bob.identity, networkKey: networkKey, staticKey: bob.staticKey,
            ephemeral: bob.ephemeral)
        let proofs = parties.map { IdentityProof(identity: $0.identity, staticKey: $0.staticKey.publicKey).bytes }
        let channels = GossipMessage.channels([ValidVectors.seoul.id]).wireBytes
        let datagrams = GossipMessage.datagrams(port: 7777, index: 0x0102_0304).wireBytes
        var messages: [JSONValue] = []
        func record(_ from: String, _ what: String, _ payload: [UInt8], _ frame: [UInt8]) {
            messages.append(
                .object([
                    "from": .string(from), "what": .string(what), "payload": .string(Hex.encode(payload)),
                    "frame": .string(Hex.encode(frame)),
                ]))
        }
        // The frames among a session's directives (matched without naming the directive type).
        let first = initiator.start().flatMap { directive -> [UInt8] in
            if case .send(let bytes) = directive { bytes } else { [] }
        }
        record("initiator", "handshake message 1: e", [], first)
        let second = responder.receive(first).flatMap { directive -> [UInt8] in
            if case .send(let bytes) = directive { bytes } else { [] }
        }
        record("responder", "handshake message 2: e, ee, s, es", [], second)
        let third = initiator.receive(second).flatMap { directive -> [UInt8] in
            if case .send(let bytes) = directive { bytes } else { [] }
        }
        record("initiator", "handshake message 3: s, se, psk, with the initiator's identity proof", proofs[0], third)
        let identityFrame = responder.receive(third).flatMap { directive -> [UInt8] in
            if case .send(let bytes) = directive { bytes } else { [] }
        }
        record(
            "responder", "transport message 1 of the responder: kind 00, its identity proof", [0x00] + proofs[1],
            identityFrame)
        _ = initiator.receive(identityFrame)
        precondition(initiator.peer == bob.identity.publicKey && responder.peer == alice.identity.publicKey)
        let fifth = initiator.send(channels).flatMap { directive -> [UInt8] in
            if case .send(let bytes) = directive { bytes } else { [] }
        }
        record(
            "initiator", "transport message 1 of the initiator: kind 01, channels [2, [id of the channel 서울특별시]]",
            [0x01] + channels, fifth)
        let sixth = responder.send(datagrams).flatMap { directive -> [UInt8] in
            if case .send(let bytes) = directive { bytes } else { [] }
        }
        record(
            "responder", "transport message 2 of the responder: kind 01, datagrams [6, 7777, 16909060]",
            [0x01] + datagrams, sixth)
        let hash = initiator.handshakeHash!
        let datagramPrefix = Array("dongne.datagram.v1".utf8) + [0]
        let handshake = JSONValue.object([
            "about": .string(
                "A whole session opening (PROTOCOL.md 2.2, 2.3) between alice, who dials (the Noise initiator), and "
                    + "bob, with fixed static and ephemeral keys and the default network key. Each frame is the "
                    + "2-byte length and the Noise message; payload is the plaintext (for transport messages, the "
                    + "kind byte and the body)."),
            "networkKey": .string(Hex.encode(networkKey.bytes)),
            "initiator": keys(alice),
            "responder": keys(bob),
            "messages": .array(messages),
            "handshakeHash": .string(Hex.encode(hash)),
            "datagramKeys": .object([
                "initiatorToResponder": .string(
                    Hex.encode(BLAKE2b.hash256(Array("i".utf8) + hash, prefix: datagramPrefix).bytes)),
                "responderToInitiator": .string(
                    Hex.encode(BLAKE2b.hash256(Array("r".utf8) + hash, prefix: datagramPrefix).bytes)),
            ]),
        ])

        // The responder's direction goes on: it has sent messages 1 and 2; 3 to 65,535 carry the filler (an empty
        // acknowledge, the keepalive), and so do 65,536 and 65,537, which are kept.
        let filler = GossipMessage.acknowledge([]).wireBytes
        for _ in 3...65_535 { _ = responder.send(filler) }
        var rekeyed: [JSONValue] = []
        for number in [65_536, 65_537] as [UInt64] {
            let frame = responder.send(filler).flatMap { directive -> [UInt8] in
                if case .send(let bytes) = directive { bytes } else { [] }
            }
            rekeyed.append(
                .object([
                    "number": .integer(number), "nonce": .integer(number - 1),
                    "payload": .string(Hex.encode([0x01] + filler)), "frame": .string(Hex.encode(frame)),
                ]))
        }
        let rekey = JSONValue.object([
            "about": .string(
                "The handshake session's responder direction, continued: messages 3 to 65,535 (not listed) carry "
                    + "the payload below too. Message n is encrypted with nonce n - 1; message 65,536 still with the "
                    + "key of Split(), then REKEY, then message 65,537 with the rekeyed key (PROTOCOL.md 2.3)."),
            "messages": .array(rekeyed),
        ])
        return (handshake, rekey)
    }

    private static func keys(
        _ party: (role: String, identity: SigningKey, staticKey: NoiseKeyPair, ephemeral: NoiseKeyPair)
    ) -> JSONValue {
        .object([
            "identitySeed": .string(Hex.encode(party.identity.seedBytes)),
            "identityPublicKey": .string(Hex.encode(party.identity.publicKey.bytes)),
            "staticPrivateKey": .string(Hex.encode(party.staticKey.privateKey)),
            "staticPublicKey": .string(Hex.encode(party.staticKey.publicKey)),
            "ephemeralPrivateKey": .string(Hex.encode(party.ephemeral.privateKey)),
            "ephemeralPublicKey": .string(Hex.encode(party.ephemeral.publicKey)),
        ])
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
