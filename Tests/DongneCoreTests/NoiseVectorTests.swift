import Foundation
import Testing

@testable import DongneCore

/// The published Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b vector (cacophony's, as rweather/noise-c publishes it):
/// with the vector's keys, every handshake and transport message must come out byte for byte.
@Suite struct NoiseVectorTests {
    struct Vector: Decodable {
        let protocol_name: String
        let init_prologue: String
        let init_psks: [String]
        let init_static: String
        let init_ephemeral: String
        let resp_prologue: String
        let resp_psks: [String]
        let resp_static: String
        let resp_ephemeral: String
        let handshake_hash: String
        let messages: [Message]

        struct Message: Decodable {
            let payload: String
            let ciphertext: String
        }
    }

    static func vectors() throws -> [Vector] {
        struct File: Decodable { let vectors: [Vector] }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("NoiseVectors/XXpsk3_25519_ChaChaPoly_BLAKE2b.json")
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url)).vectors
    }

    static func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

    @Test func everyMessageMatchesThePublishedVector() throws {
        let vectors = try Self.vectors()
        #expect(!vectors.isEmpty)
        for vector in vectors {
            #expect(vector.protocol_name == NoiseHandshake.protocolName)
            var initiator = NoiseHandshake(
                role: .initiator, prologue: Self.bytes(vector.init_prologue),
                staticKey: NoiseKeyPair(privateKey: Self.bytes(vector.init_static)),
                psk: Self.bytes(vector.init_psks[0]),
                ephemeral: NoiseKeyPair(privateKey: Self.bytes(vector.init_ephemeral)))
            var responder = NoiseHandshake(
                role: .responder, prologue: Self.bytes(vector.resp_prologue),
                staticKey: NoiseKeyPair(privateKey: Self.bytes(vector.resp_static)),
                psk: Self.bytes(vector.resp_psks[0]),
                ephemeral: NoiseKeyPair(privateKey: Self.bytes(vector.resp_ephemeral)))
            var transports:
                (initiator: (NoiseCipherState, NoiseCipherState), responder: (NoiseCipherState, NoiseCipherState))?
            for (index, message) in vector.messages.enumerated() {
                let payload = Self.bytes(message.payload)
                let fromInitiator = index % 2 == 0
                let ciphertext: [UInt8]
                if index < 3 {
                    ciphertext =
                        fromInitiator ? try initiator.writeMessage(payload) : try responder.writeMessage(payload)
                    let read =
                        fromInitiator ? try responder.readMessage(ciphertext) : try initiator.readMessage(ciphertext)
                    #expect(read == payload)
                    if index == 2 {
                        #expect(Hex.encode(initiator.handshakeHash) == vector.handshake_hash)
                        #expect(responder.handshakeHash == initiator.handshakeHash)
                        transports = (try initiator.transport(), try responder.transport())
                    }
                } else {
                    guard var pair = transports else { Issue.record("no transport"); return }
                    if fromInitiator {
                        ciphertext = try pair.initiator.0.encrypt(payload)
                        #expect(try pair.responder.1.decrypt(ciphertext) == payload)
                    } else {
                        ciphertext = try pair.responder.0.encrypt(payload)
                        #expect(try pair.initiator.1.decrypt(ciphertext) == payload)
                    }
                    transports = pair
                }
                #expect(Hex.encode(ciphertext) == message.ciphertext, "message \(index)")
            }
        }
    }
}
