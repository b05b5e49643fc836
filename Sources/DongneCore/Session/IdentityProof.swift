/// A node's proof that its Noise static key speaks for its Ed25519 identity, as libp2p's Noise handshake binds
/// them: the identity signs its session's static key.
///
/// Encoded as the canonical CBOR map `{1: identity key (32 bytes), 2: signature (64 bytes)}`; the signature is
/// Ed25519 by the identity over `"dongne.session.static.v1" 0x00 ‖ static public key (32 bytes)`.
public struct IdentityProof: Sendable, Equatable {
    /// The identity the proof is for.
    public let identity: PublicKey
    /// The identity's signature of the prefixed static key.
    public let signature: Signature

    /// Domain-separation prefix of the signed bytes.
    public static let prefix: [UInt8] = Array("dongne.session.static.v1".utf8) + [0]

    /// The proof that `identity` owns `staticKey`.
    public init(identity: SigningKey, staticKey: [UInt8]) {
        self.identity = identity.publicKey
        self.signature = identity.sign(Self.prefix + staticKey)
    }

    /// The canonical bytes.
    public var bytes: [UInt8] {
        CBOREncoder.encode(
            .map([
                CBORMapEntry(.unsigned(1), .bytes(identity.bytes)), CBORMapEntry(.unsigned(2), .bytes(signature.bytes)),
            ]))
    }

    /// Decodes a proof and checks it against the static key the handshake saw; nil when anything is wrong.
    public static func verified(_ bytes: [UInt8], staticKey: [UInt8]) -> PublicKey? {
        guard bytes.count <= 128, case .map(let entries)? = try? CBORDecoder.decode(bytes), entries.count == 2,
            entries[0].key == .unsigned(1), case .bytes(let key) = entries[0].value, let identity = PublicKey(key),
            entries[1].key == .unsigned(2), case .bytes(let signatureBytes) = entries[1].value,
            let signature = Signature(signatureBytes),
            identity.isValidSignature(signature, of: prefix + staticKey)
        else { return nil }
        return identity
    }
}
