import DongneCore
import FuzzSupport

/// One end of the session test vectors (`Protocol/vectors/session.json`): its identity, its Noise static key
/// and its ephemeral key, all fixed, so that the vectors' frames are valid input and every run is repeatable.
struct Party {
    let identity: SigningKey
    let staticKey: NoiseKeyPair
    let ephemeral: NoiseKeyPair

    init(seed: String, staticKey: String, ephemeral: String) {
        identity = SigningKey(seed: Hex.decode(seed)!)!
        self.staticKey = NoiseKeyPair(privateKey: Hex.decode(staticKey)!)
        self.ephemeral = NoiseKeyPair(privateKey: Hex.decode(ephemeral)!)
    }

    func session(_ role: NoiseHandshake.Role, rekeyInterval: UInt64) -> SecureSession {
        SecureSession(
            role: role, identity: identity, networkKey: networkKey, staticKey: staticKey, ephemeral: ephemeral,
            rekeyInterval: rekeyInterval)
    }

    func handshake(_ role: NoiseHandshake.Role) -> NoiseHandshake {
        NoiseHandshake(
            role: role, prologue: SecureSession.prologue, staticKey: staticKey, psk: networkKey.bytes,
            ephemeral: ephemeral)
    }
}

/// The default network's key, as the vectors give it: deriving it (Argon2id, 64 MiB) is not what is tested.
let networkKey = NetworkKey(bytes: Hex.decode("c0848f676830a100dc8a17cde8d7ed82135ef0db84cecd69bfb36add66956223")!)!
let alice = Party(
    seed: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    staticKey: "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf",
    ephemeral: "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
let bob = Party(
    seed: "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f",
    staticKey: "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf",
    ephemeral: "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0efeeedecebeae9e8e7e6e5e4e3e2e1e0")

/// The Noise XXpsk3 handshake and the session around it (`SecureSession.receive`). The first byte picks how,
/// and its upper 6 bits pick a number `n`:
///
/// - 0: the rest is a byte stream to Bob, the responder; 1: to Alice, the initiator, once she has started.
///   Handing the stream over in two pieces (cut at `n`/63 of it) gives the same directives as in one.
/// - 2: Alice as a bare `NoiseHandshake` against Bob's session, 3: Bob's handshake against Alice's session, so
///   that what the fuzzer writes arrives authenticated: parts (see `FuzzInput.part`) are the handshake payloads,
///   then transport plaintexts, encrypted and rekeyed every `n % 4 + 1` messages as the protocol says. The
///   session establishes exactly when the identity proof is valid, and delivers, ends or refuses each message
///   as its kind byte says.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHandshake(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    let mode = input.byte()
    let number = Int(mode >> 2)
    let rekeyInterval = SecureSession.defaultRekeyInterval
    switch mode % 4 {
    case 0: readStream(input.rest(), cutAt: number, starting: bob.session(.responder, rekeyInterval: rekeyInterval))
    case 1: readStream(input.rest(), cutAt: number, starting: alice.session(.initiator, rekeyInterval: rekeyInterval))
    case 2: answerInitiator(&input, rekeyInterval: UInt64(number % 4 + 1))
    default: answerResponder(&input, rekeyInterval: UInt64(number % 4 + 1))
    }
    return 0
}

/// Directives do not depend on how the stream is cut.
func readStream(_ stream: [UInt8], cutAt sixtyThirds: Int, starting fresh: SecureSession) {
    var whole = fresh, pieces = fresh
    _ = whole.start()
    _ = pieces.start()
    let cut = stream.count * sixtyThirds / 63
    let once = whole.receive(stream)
    let twice = pieces.receive(Array(stream[..<cut])) + pieces.receive(Array(stream[cut...]))
    expect(once == twice, "one piece gave \(once), two gave \(twice)")
}

/// Alice's handshake writes messages 1 and 3 with the fuzzer's payloads to Bob's session, then transport messages.
func answerInitiator(_ input: inout FuzzInput, rekeyInterval: UInt64) {
    var session = bob.session(.responder, rekeyInterval: rekeyInterval)
    var peer = alice.handshake(.initiator)
    guard let first = try? peer.writeMessage(input.part()) else { return }
    let second = session.receive(FrameReader.frame(first))
    guard second.count == 1, let message2 = body(second[0]) else { return expect(false, "no message 2: \(second)") }
    expect((try? peer.readMessage(message2)) != nil, "Bob's message 2 does not read")
    let proof = input.part()
    guard let third = try? peer.writeMessage(proof) else { return }
    let answer = session.receive(FrameReader.frame(third))
    guard let identity = IdentityProof.verified(proof, staticKey: alice.staticKey.publicKey) else {
        return expect(answer == [.close(.identityRejected)], "an invalid proof gave \(answer)")
    }
    expect(answer.count == 2 && answer[1] == .established(identity), "a valid proof gave \(answer)")
    expect(session.handshakeHash == peer.handshakeHash, "the two ends' handshake hashes differ")
    var (send, receive) = try! peer.transport()
    let bobsProof = answer.first.flatMap(body).flatMap { try? receive.decrypt($0) }
    expect(bobsProof?.first == 0, "Bob's first transport message is not his identity")
    let bobsIdentity = bobsProof.flatMap { proof in
        IdentityProof.verified(Array(proof.dropFirst()), staticKey: bob.staticKey.publicKey)
    }
    expect(bobsIdentity == bob.identity.publicKey, "Bob's identity proof does not verify")
    transport(&input, to: &session, with: &send, rekeyInterval: rekeyInterval)
}

/// Bob's handshake answers Alice's session with the fuzzer's message 2 payload, then sends the fuzzer's identity
/// message and transport messages.
func answerResponder(_ input: inout FuzzInput, rekeyInterval: UInt64) {
    var session = alice.session(.initiator, rekeyInterval: rekeyInterval)
    var peer = bob.handshake(.responder)
    guard let message1 = session.start().first.flatMap(body), (try? peer.readMessage(message1)) != nil,
        let second = try? peer.writeMessage(input.part())
    else { return expect(false, "Alice's message 1 does not read") }
    let third = session.receive(FrameReader.frame(second))
    guard third.count == 1, let message3 = body(third[0]), let proof = try? peer.readMessage(message3) else {
        return expect(false, "no message 3: \(third)")
    }
    let identity = IdentityProof.verified(proof, staticKey: alice.staticKey.publicKey)
    expect(identity == alice.identity.publicKey, "Alice's identity proof does not verify")
    var (send, _) = try! peer.transport()
    let plaintext = plaintextPart(&input)
    let answer = session.receive(FrameReader.frame(seal(plaintext, with: &send, rekeyInterval: rekeyInterval)))
    guard plaintext.first == 0,
        let identity = IdentityProof.verified(Array(plaintext.dropFirst()), staticKey: bob.staticKey.publicKey)
    else { return expect(answer == [.close(.identityRejected)], "an invalid identity message gave \(answer)") }
    expect(answer == [.established(identity)], "a valid identity message gave \(answer)")
    expect(session.handshakeHash == peer.handshakeHash, "the two ends' handshake hashes differ")
    transport(&input, to: &session, with: &send, rekeyInterval: rekeyInterval)
}

/// Each remaining part is a transport plaintext: its kind byte, then the body.
func transport(
    _ input: inout FuzzInput, to session: inout SecureSession, with send: inout NoiseCipherState,
    rekeyInterval: UInt64
) {
    while !input.isEmpty {
        let plaintext = plaintextPart(&input)
        let answer = session.receive(FrameReader.frame(seal(plaintext, with: &send, rekeyInterval: rekeyInterval)))
        switch plaintext.first {
        case 0x01: expect(answer == [.deliver(Array(plaintext.dropFirst()))], "a message gave \(answer)")
        case 0x02: return expect(answer == [.close(.goodbye)], "a goodbye gave \(answer)")
        case 0x00: return expect(answer == [.close(.unexpectedFrame)], "a second identity gave \(answer)")
        default: return expect(answer == [.close(.decryptionFailed)], "kind \(plaintext.first ?? 0) gave \(answer)")
        }
    }
}

/// A part as a transport plaintext, cut to the largest that fits one frame once encrypted.
func plaintextPart(_ input: inout FuzzInput) -> [UInt8] {
    Array(input.part().prefix(SecureSession.maximumMessageBytes + 1))
}

/// A transport message as `SecureSession` seals it: encrypted, then rekeyed after every `rekeyInterval`.
func seal(_ plaintext: [UInt8], with cipher: inout NoiseCipherState, rekeyInterval: UInt64) -> [UInt8] {
    let message = try! cipher.encrypt(plaintext)
    if cipher.messageCount % rekeyInterval == 0 { cipher.rekey() }
    return message
}

/// The Noise message a `.send` directive frames.
func body(_ directive: SecureSession.Directive) -> [UInt8]? {
    guard case .send(let frame) = directive, frame.count >= 2 else { return nil }
    return Array(frame.dropFirst(2))
}
