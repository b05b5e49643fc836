/// Why a Noise handshake or transport message failed. Any of these ends the session.
public enum NoiseError: Error, Hashable, Sendable {
    /// A message arrived that this side was not expecting now (out of turn, or after the handshake).
    case unexpectedMessage
    /// A handshake message was shorter than its tokens require.
    case truncated
    /// Decryption failed: wrong key, wrong network key (PSK), tampered bytes or a replay.
    case decryptionFailed
    /// A Diffie-Hellman result was all zero: the peer sent a small-order public key.
    case invalidPublicKey
    /// The nonce counter is exhausted (2^64 − 1 messages); rekeying is mandatory before that.
    case nonceExhausted
    /// A message larger than Noise's 65,535-byte limit.
    case messageTooLarge
}
