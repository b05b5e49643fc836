/// BLAKE2b-256 (RFC 7693, unkeyed, 32-byte output), the one hash dongne uses for ids and blob addresses.
public enum BLAKE2b {
    /// The hash of `prefix` ‖ `bytes`. Every hash in the protocol has its own prefix (domain separation).
    public static func hash256(_ bytes: [UInt8], prefix: [UInt8] = []) -> Bytes32 {
        Sodium.blake2b256(prefix: prefix, bytes: bytes)
    }
}
