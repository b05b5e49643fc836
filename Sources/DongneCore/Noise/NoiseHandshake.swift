/// An X25519 key pair for Noise.
public struct NoiseKeyPair: Sendable, Equatable {
    /// The 32-byte private key.
    public let privateKey: [UInt8]
    /// The 32-byte public key.
    public let publicKey: [UInt8]

    /// The key pair of a 32-byte private key.
    public init(privateKey: [UInt8]) {
        self.privateKey = privateKey
        self.publicKey = Sodium.x25519PublicKey(of: privateKey)
    }

    /// A fresh key pair from the operating system's secure random source.
    public static func generate() -> NoiseKeyPair { NoiseKeyPair(privateKey: Sodium.randomBytes(32)) }
}

/// The handshake of `Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b` (Noise rev. 34, §7.5 and §9), as a value:
///
///     -> e
///     <- e, ee, s, es
///     -> s, se, psk
///
/// Each side calls ``writeMessage(_:)`` and ``readMessage(_:)`` in turn; after the third message both call
/// ``transport()``. With the psk modifier every `e` token also mixes the ephemeral key into the cipher key
/// (§9.2), so nothing is readable by anyone without the PSK, and the third message proves the PSK.
public struct NoiseHandshake: Sendable {
    /// Which side of the handshake this is.
    public enum Role: Sendable, Equatable {
        /// Sends the first message.
        case initiator
        /// Answers it.
        case responder
    }

    /// The protocol name, hashed into the initial state.
    public static let protocolName = "Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b"

    private enum Token { case e, s, ee, es, se, psk }
    private static let messagePatterns: [[Token]] = [[.e], [.e, .ee, .s, .es], [.s, .se, .psk]]

    /// This side's role.
    public let role: Role
    private var symmetric: NoiseSymmetricState
    private let localStatic: NoiseKeyPair
    private var localEphemeral: NoiseKeyPair?
    private let psk: [UInt8]
    private var remoteEphemeral: [UInt8]?
    /// The peer's static public key, once its message carrying it was read.
    public private(set) var remoteStatic: [UInt8]?
    private var step = 0

    /// A handshake in `role`, with this side's static key and the pre-shared key (32 bytes). `ephemeral` fixes
    /// the ephemeral key for test vectors; leave it nil to make a fresh one.
    public init(
        role: Role, prologue: [UInt8], staticKey: NoiseKeyPair, psk: [UInt8], ephemeral: NoiseKeyPair? = nil
    ) {
        precondition(psk.count == 32, "a Noise PSK is 32 bytes")
        self.role = role
        self.localStatic = staticKey
        self.psk = psk
        self.localEphemeral = ephemeral
        symmetric = NoiseSymmetricState(protocolName: Self.protocolName)
        symmetric.mixHash(prologue)
    }

    /// Whether all three messages have been processed.
    public var isComplete: Bool { step == Self.messagePatterns.count }

    /// Whether it is this side's turn to write.
    public var isMyTurnToWrite: Bool { !isComplete && (step % 2 == 0) == (role == .initiator) }

    /// The handshake hash `h`: a unique name of this session, which both sides share once it is complete.
    public var handshakeHash: [UInt8] { symmetric.handshakeHash }

    /// Writes the next handshake message, carrying `payload` (encrypted unless it is the first message).
    public mutating func writeMessage(_ payload: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard isMyTurnToWrite else { throw .unexpectedMessage }
        var message: [UInt8] = []
        for token in Self.messagePatterns[step] {
            switch token {
            case .e:
                let ephemeral = localEphemeral ?? NoiseKeyPair.generate()
                localEphemeral = ephemeral
                message += ephemeral.publicKey
                symmetric.mixHash(ephemeral.publicKey)
                symmetric.mixKey(ephemeral.publicKey)
            case .s: message += try symmetric.encryptAndHash(localStatic.publicKey)
            case .ee, .es, .se: try mixDiffieHellman(token)
            case .psk: symmetric.mixKeyAndHash(psk)
            }
        }
        message += try symmetric.encryptAndHash(payload)
        guard message.count <= 65_535 else { throw .messageTooLarge }
        step += 1
        return message
    }

    /// Reads the peer's next handshake message and returns its payload.
    public mutating func readMessage(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard !isComplete, !isMyTurnToWrite else { throw .unexpectedMessage }
        guard message.count <= 65_535 else { throw .messageTooLarge }
        var rest = message[...]
        func take(_ count: Int) throws(NoiseError) -> [UInt8] {
            guard rest.count >= count else { throw .truncated }
            defer { rest = rest.dropFirst(count) }
            return Array(rest.prefix(count))
        }
        for token in Self.messagePatterns[step] {
            switch token {
            case .e:
                let ephemeral = try take(32)
                remoteEphemeral = ephemeral
                symmetric.mixHash(ephemeral)
                symmetric.mixKey(ephemeral)
            case .s: remoteStatic = try symmetric.decryptAndHash(try take(symmetric.cipher.hasKey ? 48 : 32))
            case .ee, .es, .se: try mixDiffieHellman(token)
            case .psk: symmetric.mixKeyAndHash(psk)
            }
        }
        let payload = try symmetric.decryptAndHash(Array(rest))
        step += 1
        return payload
    }

    /// The transport cipher states once the handshake is complete: what this side sends with, and what it
    /// receives with.
    public func transport() throws(NoiseError) -> (send: NoiseCipherState, receive: NoiseCipherState) {
        guard isComplete else { throw .unexpectedMessage }
        let (initiatorToResponder, responderToInitiator) = symmetric.split()
        return role == .initiator
            ? (initiatorToResponder, responderToInitiator) : (responderToInitiator, initiatorToResponder)
    }

    /// ee, es and se: which keys meet depends on the role (§7.1).
    private mutating func mixDiffieHellman(_ token: Token) throws(NoiseError) {
        let local: NoiseKeyPair?, remote: [UInt8]?
        switch (token, role) {
        case (.ee, _): (local, remote) = (localEphemeral, remoteEphemeral)
        case (.es, .initiator), (.se, .responder): (local, remote) = (localEphemeral, remoteStatic)
        case (.es, .responder), (.se, .initiator): (local, remote) = (localStatic, remoteEphemeral)
        case (.e, _), (.s, _), (.psk, _): preconditionFailure("only ee, es and se are Diffie-Hellman tokens")
        }
        guard let local, let remote, let shared = Sodium.x25519(local.privateKey, remote) else {
            throw .invalidPublicKey
        }
        symmetric.mixKey(shared)
    }
}
