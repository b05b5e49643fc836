/// One end of a dongne session over a byte stream: the Noise XXpsk3 handshake with identity proofs, then
/// encrypted, length-framed, in-order messages. A pure state machine: bytes in, ``Directive``s out.
///
///     initiator                                  responder
///     -> frame(msg1: e)
///                                  <- frame(msg2: e, ee, s, es)
///     -> frame(msg3: s, se, psk; payload: initiator's IdentityProof)
///                                  <- frame(transport: 0x00 ‖ responder's IdentityProof)
///     … frame(transport: 0x01 ‖ message) both ways … frame(transport: 0x02) says goodbye
///
/// The responder sends its identity only after message 3 proved the network key: message 2's payload is
/// readable by anyone who starts a handshake, so a node without the key learns no identity at all. Each
/// session uses a fresh Noise static key, which the identity proofs bind to the long-term Ed25519 keys.
/// Each direction rekeys (Noise REKEY) after every ``rekeyInterval`` messages, at the same count on both ends.
public struct SecureSession: Sendable {
    /// What the shell must do.
    public enum Directive: Sendable, Equatable {
        /// Write these bytes to the stream.
        case send([UInt8])
        /// The peer proved it holds the network key and this identity; messages may flow.
        case established(PublicKey)
        /// A message from the peer.
        case deliver([UInt8])
        /// The session is over; close the stream (after writing what came before this action).
        case close(SessionError)
    }

    /// Messages per direction between two rekeys.
    public static let defaultRekeyInterval: UInt64 = 1 << 16
    /// The largest message ``send(_:)`` takes: a Noise message less its tag and the type byte.
    public static let maximumMessageBytes = FrameReader.maximumFrameBytes - 16 - 1
    /// The prologue every handshake hashes first: the protocol and its version.
    public static let prologue: [UInt8] = Array("dongne/1".utf8)

    private enum Kind: UInt8 {
        case identity = 0x00
        case message = 0x01
        case goodbye = 0x02
    }

    private enum State: Sendable {
        case handshaking(NoiseHandshake)
        case awaitingIdentity(send: NoiseCipherState, receive: NoiseCipherState, remoteStatic: [UInt8])
        case established(send: NoiseCipherState, receive: NoiseCipherState, peer: PublicKey)
        case closed
    }

    private var state: State
    private var frames = FrameReader()
    /// The handshake hash `h`, once the handshake is complete: a name both ends share for this session, from
    /// which ``DatagramChannel`` derives its keys.
    public private(set) var handshakeHash: [UInt8]?
    /// Whether this end started the handshake.
    public let role: NoiseHandshake.Role
    private let identity: SigningKey
    private let staticKey: NoiseKeyPair
    private let rekeyInterval: UInt64

    /// A session end. `staticKey` and `ephemeral` are fixed only by tests; by default both are fresh.
    public init(
        role: NoiseHandshake.Role, identity: SigningKey, networkKey: NetworkKey,
        staticKey: NoiseKeyPair = .generate(), ephemeral: NoiseKeyPair? = nil,
        rekeyInterval: UInt64 = defaultRekeyInterval
    ) {
        self.identity = identity
        self.staticKey = staticKey
        self.rekeyInterval = rekeyInterval
        self.role = role
        state = .handshaking(
            NoiseHandshake(
                role: role, prologue: Self.prologue, staticKey: staticKey, psk: networkKey.bytes, ephemeral: ephemeral))
    }

    /// The peer's identity, once established.
    public var peer: PublicKey? {
        if case .established(_, _, let peer) = state { return peer }
        return nil
    }

    /// Starts the handshake: the initiator's first message (the responder starts by reading).
    public mutating func start() -> [Directive] {
        guard case .handshaking(var handshake) = state, handshake.isMyTurnToWrite else { return [] }
        return writeHandshake(&handshake, payload: [])
    }

    /// Takes bytes read from the stream.
    public mutating func receive(_ bytes: [UInt8]) -> [Directive] {
        var actions: [Directive] = []
        for frame in frames.append(bytes) {
            if case .closed = state { break }
            actions += receiveFrame(frame)
        }
        return actions
    }

    /// Sends one message to the peer; refused before the session is established.
    public mutating func send(_ message: [UInt8]) -> [Directive] {
        guard message.count <= Self.maximumMessageBytes else { return fail(.messageTooLarge) }
        guard case .established(var sendCipher, let receiveCipher, let peer) = state else {
            return fail(.notEstablished)
        }
        let actions = seal(Kind.message, message, with: &sendCipher)
        state = .established(send: sendCipher, receive: receiveCipher, peer: peer)
        return actions
    }

    /// Says goodbye and ends the session.
    public mutating func close() -> [Directive] {
        guard case .established(var sendCipher, _, _) = state else {
            state = .closed
            return [.close(.goodbye)]
        }
        let actions = seal(Kind.goodbye, [], with: &sendCipher)
        state = .closed
        return actions + [.close(.goodbye)]
    }

    // MARK: Handshake

    private mutating func receiveFrame(_ frame: [UInt8]) -> [Directive] {
        switch state {
        case .handshaking(var handshake): return readHandshake(&handshake, frame)
        case .awaitingIdentity(let sendCipher, var receiveCipher, let remoteStatic):
            guard let (kind, body) = open(frame, with: &receiveCipher), kind == .identity,
                let peer = IdentityProof.verified(body, staticKey: remoteStatic)
            else { return fail(.identityRejected) }
            state = .established(send: sendCipher, receive: receiveCipher, peer: peer)
            return [.established(peer)]
        case .established(let sendCipher, var receiveCipher, let peer):
            guard let (kind, body) = open(frame, with: &receiveCipher) else { return fail(.decryptionFailed) }
            state = .established(send: sendCipher, receive: receiveCipher, peer: peer)
            switch kind {
            case .message: return [.deliver(body)]
            case .goodbye:
                state = .closed
                return [.close(.goodbye)]
            case .identity: return fail(.unexpectedFrame)
            }
        case .closed: return []
        }
    }

    private mutating func readHandshake(_ handshake: inout NoiseHandshake, _ frame: [UInt8]) -> [Directive] {
        let payload: [UInt8]
        do { payload = try handshake.readMessage(frame) } catch { return fail(.handshakeFailed(error)) }
        if !handshake.isComplete { return writeHandshake(&handshake, payload: []) }
        // The responder has read message 3: the network key is proven and the payload is the initiator's proof.
        guard let remoteStatic = handshake.remoteStatic,
            let peer = IdentityProof.verified(payload, staticKey: remoteStatic),
            let (transportSend, receiveCipher) = try? handshake.transport()
        else { return fail(.identityRejected) }
        var sendCipher = transportSend
        handshakeHash = handshake.handshakeHash
        let proof = seal(
            Kind.identity, IdentityProof(identity: identity, staticKey: staticKey.publicKey).bytes, with: &sendCipher)
        state = .established(send: sendCipher, receive: receiveCipher, peer: peer)
        return proof + [.established(peer)]
    }

    private mutating func writeHandshake(_ handshake: inout NoiseHandshake, payload: [UInt8]) -> [Directive] {
        // Message 3 (the initiator's second write) carries its identity proof, behind the PSK.
        let isThird = handshake.role == .initiator && handshake.remoteStatic != nil
        let body = isThird ? IdentityProof(identity: identity, staticKey: staticKey.publicKey).bytes : payload
        let message: [UInt8]
        do { message = try handshake.writeMessage(body) } catch { return fail(.handshakeFailed(error)) }
        if handshake.isComplete, let remoteStatic = handshake.remoteStatic,
            let (sendCipher, receiveCipher) = try? handshake.transport()
        {
            handshakeHash = handshake.handshakeHash
            state = .awaitingIdentity(send: sendCipher, receive: receiveCipher, remoteStatic: remoteStatic)
        } else {
            state = .handshaking(handshake)
        }
        return [.send(FrameReader.frame(message))]
    }

    // MARK: Transport

    private func seal(_ kind: Kind, _ body: [UInt8], with cipher: inout NoiseCipherState) -> [Directive] {
        guard let ciphertext = try? cipher.encrypt([kind.rawValue] + body) else { return [.close(.nonceExhausted)] }
        if cipher.messageCount % rekeyInterval == 0 { cipher.rekey() }
        return [.send(FrameReader.frame(ciphertext))]
    }

    private func open(_ frame: [UInt8], with cipher: inout NoiseCipherState) -> (Kind, [UInt8])? {
        guard let plaintext = try? cipher.decrypt(frame), let first = plaintext.first, let kind = Kind(rawValue: first)
        else { return nil }
        if cipher.messageCount % rekeyInterval == 0 { cipher.rekey() }
        return (kind, Array(plaintext.dropFirst()))
    }

    private mutating func fail(_ error: SessionError) -> [Directive] {
        state = .closed
        return [.close(error)]
    }
}

/// Why a session ended.
public enum SessionError: Error, Sendable, Equatable {
    /// The peer said goodbye, or this side did.
    case goodbye
    /// A handshake message did not check out: most often a different network key.
    case handshakeFailed(NoiseError)
    /// An identity proof was missing, malformed, or signed by another key than it claims.
    case identityRejected
    /// A transport frame failed to decrypt (tampered, replayed, reordered, or a different key).
    case decryptionFailed
    /// A frame of a kind that is not allowed at this point.
    case unexpectedFrame
    /// A message over ``SecureSession/maximumMessageBytes``.
    case messageTooLarge
    /// Sending before the session was established, or after it closed.
    case notEstablished
    /// 2^64 − 1 messages in one direction.
    case nonceExhausted
}
