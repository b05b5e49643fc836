import DongneCore
import Testing

/// Two session ends wired back to back in memory.
struct SessionPair {
    var initiator: SecureSession
    var responder: SecureSession
    var initiatorSaw: [SecureSession.Directive] = []
    var responderSaw: [SecureSession.Directive] = []

    static let alice = SigningKey(seed: [UInt8](repeating: 0xa1, count: 32))!
    static let bob = SigningKey(seed: [UInt8](repeating: 0xb1, count: 32))!
    static let network = NetworkKey(bytes: [UInt8](repeating: 0x42, count: 32))!

    init(initiatorKey: NetworkKey = network, rekeyInterval: UInt64 = SecureSession.defaultRekeyInterval) {
        initiator = SecureSession(
            role: .initiator, identity: Self.alice, networkKey: initiatorKey, rekeyInterval: rekeyInterval)
        responder = SecureSession(
            role: .responder, identity: Self.bob, networkKey: Self.network, rekeyInterval: rekeyInterval)
    }

    /// Runs the handshake, optionally damaging one of the frames on the way (by its index).
    mutating func handshake(damaging frameIndex: Int? = nil) {
        var toResponder = Self.bytes(initiator.start()), toInitiator: [UInt8] = []
        var sent = 0
        for _ in 0..<4 {
            if frameIndex == sent, !toResponder.isEmpty { toResponder[toResponder.count - 1] ^= 0x10 }
            if !toResponder.isEmpty { sent += 1 }
            let fromResponder = responder.receive(toResponder)
            responderSaw += fromResponder
            toInitiator = Self.bytes(fromResponder)
            toResponder = []
            if frameIndex == sent, !toInitiator.isEmpty { toInitiator[toInitiator.count - 1] ^= 0x10 }
            if !toInitiator.isEmpty { sent += 1 }
            let fromInitiator = initiator.receive(toInitiator)
            initiatorSaw += fromInitiator
            toResponder = Self.bytes(fromInitiator)
        }
    }

    static func bytes(_ actions: [SecureSession.Directive]) -> [UInt8] {
        actions.flatMap { action -> [UInt8] in if case .send(let bytes) = action { bytes } else { [] } }
    }
}

@Suite struct SecureSessionTests {
    @Test func bothEndsLearnEachOthersIdentityAndExchangeMessages() {
        var pair = SessionPair()
        pair.handshake()
        #expect(pair.initiatorSaw.contains(.established(SessionPair.bob.publicKey)))
        #expect(pair.responderSaw.contains(.established(SessionPair.alice.publicKey)))
        let hello = SessionPair.bytes(pair.initiator.send(Array("안녕".utf8)))
        #expect(pair.responder.receive(hello) == [.deliver(Array("안녕".utf8))])
        let back = SessionPair.bytes(pair.responder.send([1, 2, 3]))
        #expect(pair.initiator.receive(back) == [.deliver([1, 2, 3])])
    }

    @Test func aWrongNetworkKeyGetsNoSessionAndNoIdentity() {
        var pair = SessionPair(initiatorKey: NetworkKey(bytes: [UInt8](repeating: 0x43, count: 32))!)
        pair.handshake()
        let everything = pair.initiatorSaw + pair.responderSaw
        #expect(!everything.contains { if case .established = $0 { true } else { false } })
        #expect(pair.responderSaw.last == .close(.handshakeFailed(.decryptionFailed)))
        // Nothing the responder sent carries its identity key, in the clear or otherwise readable.
        let sent = SessionPair.bytes(pair.responderSaw)
        #expect(!Self.contains(sent, SessionPair.bob.publicKey.bytes))
    }

    @Test("a flipped bit in any handshake frame aborts the session", arguments: 0..<4)
    func flippedBitAborts(frame: Int) {
        var pair = SessionPair()
        pair.handshake(damaging: frame)
        let established = (pair.initiatorSaw + pair.responderSaw).filter {
            if case .established = $0 { true } else { false }
        }
        #expect(established.count < 2, "frame \(frame) was damaged yet both ends were established")
        let closed = (pair.initiatorSaw + pair.responderSaw).contains { if case .close = $0 { true } else { false } }
        #expect(closed)
    }

    @Test func replayedAndReorderedFramesEndTheSession() {
        var pair = SessionPair()
        pair.handshake()
        let first = SessionPair.bytes(pair.initiator.send([1]))
        #expect(pair.responder.receive(first) == [.deliver([1])])
        #expect(pair.responder.receive(first) == [.close(.decryptionFailed)])
    }

    @Test func messagesKeepFlowingAcrossRekeys() {
        var pair = SessionPair(rekeyInterval: 3)
        pair.handshake()
        for index in 0..<20 {
            let frame = SessionPair.bytes(pair.initiator.send([UInt8(index)]))
            #expect(pair.responder.receive(frame) == [.deliver([UInt8(index)])])
        }
    }

    @Test func oversizeMessagesAndEarlySendsAreRefused() {
        var pair = SessionPair()
        #expect(pair.initiator.send([1]) == [.close(.notEstablished)])
        pair = SessionPair()
        pair.handshake()
        let huge = [UInt8](repeating: 0, count: SecureSession.maximumMessageBytes + 1)
        #expect(pair.initiator.send(huge) == [.close(.messageTooLarge)])
        pair = SessionPair()
        pair.handshake()
        let largest = [UInt8](repeating: 7, count: SecureSession.maximumMessageBytes)
        #expect(pair.responder.receive(SessionPair.bytes(pair.initiator.send(largest))) == [.deliver(largest)])
    }

    @Test func goodbyeClosesBothEnds() {
        var pair = SessionPair()
        pair.handshake()
        let actions = pair.initiator.close()
        #expect(actions.last == .close(.goodbye))
        #expect(pair.responder.receive(SessionPair.bytes(actions)) == [.close(.goodbye)])
    }

    @Test func framesSplitAnywhereInTheStreamAreReassembled() {
        var reader = FrameReader()
        let stream =
            FrameReader.frame([1, 2, 3]) + FrameReader.frame([]) + FrameReader.frame([UInt8](repeating: 9, count: 300))
        var frames: [[UInt8]] = []
        for byte in stream { frames += reader.append([byte]) }
        #expect(frames == [[1, 2, 3], [], [UInt8](repeating: 9, count: 300)])
        #expect(reader.bufferedCount == 0)
    }

    @Test func theNetworkKeyComesFromThePassphraseByArgon2id() {
        let key = NetworkKey(passphrase: NetworkKey.defaultPassphrase)!
        #expect(key == NetworkKey(passphrase: "dongne")!)
        #expect(key != NetworkKey(passphrase: "dongne ")!)
        #expect(!"\(key)".contains(Hex.encode(key.bytes).prefix(16)))
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
