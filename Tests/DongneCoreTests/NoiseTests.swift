import Testing

@testable import DongneCore

@Suite struct NoiseTests {
    static let psk = [UInt8](repeating: 0x70, count: 32)
    static let prologue = Array("dongne/1".utf8)

    static func pair(initiatorPSK: [UInt8] = psk) -> (NoiseHandshake, NoiseHandshake) {
        (
            NoiseHandshake(role: .initiator, prologue: prologue, staticKey: .generate(), psk: initiatorPSK),
            NoiseHandshake(role: .responder, prologue: prologue, staticKey: .generate(), psk: psk)
        )
    }

    @Test func bothSidesAgreeAndTransportWorksBothWays() throws {
        var (initiator, responder) = Self.pair()
        #expect(try responder.readMessage(try initiator.writeMessage([1])) == [1])
        #expect(try initiator.readMessage(try responder.writeMessage([2])) == [2])
        #expect(try responder.readMessage(try initiator.writeMessage([3])) == [3])
        #expect(initiator.isComplete && responder.isComplete)
        #expect(initiator.handshakeHash == responder.handshakeHash)
        var (initiatorSend, initiatorReceive) = try initiator.transport()
        var (responderSend, responderReceive) = try responder.transport()
        #expect(try responderReceive.decrypt(try initiatorSend.encrypt(Array("안녕".utf8))) == Array("안녕".utf8))
        #expect(try initiatorReceive.decrypt(try responderSend.encrypt([9, 9])) == [9, 9])
    }

    @Test func aWrongPSKFailsTheThirdMessage() throws {
        var (initiator, responder) = Self.pair(initiatorPSK: [UInt8](repeating: 0x71, count: 32))
        _ = try responder.readMessage(try initiator.writeMessage([]))
        _ = try initiator.readMessage(try responder.writeMessage([]))
        let third = try initiator.writeMessage(Array("secret identity".utf8))
        #expect(throws: NoiseError.decryptionFailed) { try responder.readMessage(third) }
    }

    @Test func aFlippedBitInAnyHandshakeMessageAbortsIt() throws {
        for messageIndex in 0..<3 {
            for _ in 0..<20 {
                var (initiator, responder) = Self.pair()
                var writer = true  // the initiator writes messages 0 and 2
                var failed = false
                for index in 0...messageIndex {
                    var message = writer ? try initiator.writeMessage([7, 7]) : try responder.writeMessage([7, 7])
                    if index == messageIndex {
                        message[Int.random(in: message.indices)] ^= 1 << UInt8.random(in: 0..<8)
                    }
                    do {
                        _ = writer ? try responder.readMessage(message) : try initiator.readMessage(message)
                    } catch { failed = true }
                    writer.toggle()
                }
                // Message 1 is sent in the clear apart from its ephemeral key; its damage shows one step later.
                if !failed {
                    var rest: [UInt8] = []
                    do {
                        rest = writer ? try initiator.writeMessage([]) : try responder.writeMessage([])
                        _ = writer ? try responder.readMessage(rest) : try initiator.readMessage(rest)
                    } catch { failed = true }
                }
                #expect(failed, "a flipped bit in message \(messageIndex + 1) went unnoticed")
            }
        }
    }

    @Test func messagesOutOfTurnAreRefused() throws {
        var (initiator, responder) = Self.pair()
        #expect(throws: NoiseError.unexpectedMessage) { try responder.writeMessage([]) }
        #expect(throws: NoiseError.unexpectedMessage) { try initiator.readMessage([0]) }
        #expect(throws: NoiseError.truncated) { try responder.readMessage([1, 2, 3]) }
    }

    @Test func transportMessagesCannotBeReplayedOrReordered() throws {
        var (initiator, responder) = Self.pair()
        _ = try responder.readMessage(try initiator.writeMessage([]))
        _ = try initiator.readMessage(try responder.writeMessage([]))
        _ = try responder.readMessage(try initiator.writeMessage([]))
        var (send, _) = try initiator.transport()
        var (_, receive) = try responder.transport()
        let first = try send.encrypt([1]), second = try send.encrypt([2])
        #expect(throws: NoiseError.decryptionFailed) { try receive.decrypt(second) }
        #expect(try receive.decrypt(first) == [1])
        #expect(throws: NoiseError.decryptionFailed) { try receive.decrypt(first) }
        #expect(try receive.decrypt(second) == [2])
    }

    @Test func rekeyingOnBothSidesKeepsTheSessionWorking() throws {
        var sender = NoiseCipherState(key: [UInt8](repeating: 5, count: 32)), receiver = sender
        _ = try receiver.decrypt(try sender.encrypt([1]))
        sender.rekey()
        #expect(throws: NoiseError.decryptionFailed) { try receiver.decrypt(try sender.encrypt([2])) }
        var (rekeyedSender, rekeyedReceiver) = (
            NoiseCipherState(key: [UInt8](repeating: 5, count: 32)),
            NoiseCipherState(key: [UInt8](repeating: 5, count: 32))
        )
        rekeyedSender.rekey()
        rekeyedReceiver.rekey()
        #expect(try rekeyedReceiver.decrypt(try rekeyedSender.encrypt([3])) == [3])
    }

    @Test func hmacBLAKE2bMatchesPythonsHMAC() {
        // Expected values from Python: hmac.new(key, data, hashlib.blake2b).hexdigest()
        #expect(
            Hex.encode(NoiseSymmetricState.hmac(key: [1, 1, 1], data: Array("dongne".utf8)))
                == "e3d47fac355204ba7dba899bb48fc8b640088753d07a6bb9b45949e21bb9a6855cf161a09a22c43e8fa913b20f5a2a88"
                + "802d4c0aa3756fe7a95653ff66fd13f2")
        #expect(
            Hex.encode(NoiseSymmetricState.hmac(key: [UInt8](repeating: 0x0b, count: 200), data: Array("x".utf8)))
                == "6b58c702ab54a0777f48c0fcf0062b127b8d8255570825aac293456e33a2654334d885133340427cb5ce633a2f2ecb85"
                + "1bba1977ad76eebcf7763b5bd60b575c")
    }

    @Test func hmacBLAKE2bMatchesRFC2104Construction() {
        // HMAC with a key longer than the block is computed over the key's hash: both forms must agree.
        let longKey = [UInt8](repeating: 0x0b, count: 200)
        #expect(
            NoiseSymmetricState.hmac(key: longKey, data: [1])
                == NoiseSymmetricState.hmac(key: Sodium.blake2b512(longKey), data: [1]))
        #expect(NoiseSymmetricState.hmac(key: [1], data: [2]).count == 64)
    }
}
