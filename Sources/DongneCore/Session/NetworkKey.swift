/// The key that admits a node to a dongne network: the pre-shared key (PSK) of every session's handshake.
///
/// Made from a passphrase with Argon2id (libsodium's `crypto_pwhash`, algorithm argon2id13, opslimit 2,
/// memlimit 64 MiB, 32-byte output) over the UTF-8 of the NFC-normalised passphrase, with the fixed salt
/// `dongne.network1` plus one zero byte (16 bytes). A network has one key for everyone, so there is no per-user
/// salt to have; the slow hash is what makes guessing a weak passphrase expensive. The default passphrase,
/// ``defaultPassphrase``, lets fresh installs talk out of the box; any other makes a private network.
public struct NetworkKey: Sendable, Equatable, CustomStringConvertible {
    /// The 32 key bytes.
    public let bytes: [UInt8]

    /// The passphrase of the public network every fresh install joins.
    public static let defaultPassphrase = "dongne"
    /// The Argon2id salt: ASCII `dongne.network1` and a zero byte.
    public static let salt: [UInt8] = Array("dongne.network1".utf8) + [0]

    /// The key with these 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// The default network's key, as PROTOCOL.md §2.1 gives it: what ``derived(fromPassphrase:)`` makes of
    /// ``defaultPassphrase``. Everyone knows it, so a node need not spend an Argon2id (64 MiB of memory, the
    /// largest part of a start's work) at every start to learn it again.
    public static let defaultNetwork = NetworkKey(
        bytes: Hex.decode("c0848f676830a100dc8a17cde8d7ed82135ef0db84cecd69bfb36add66956223")!)!

    /// The key of the network named by `passphrase`: ``defaultNetwork`` for the default passphrase, else
    /// ``derived(fromPassphrase:)``; nil only if 64 MiB cannot be had for the hash.
    public init?(passphrase: String) {
        if ChannelName.nfc(passphrase) == Self.defaultPassphrase {
            self = Self.defaultNetwork
            return
        }
        guard let key = Self.derived(fromPassphrase: passphrase) else { return nil }
        self = key
    }

    /// The key Argon2id makes of `passphrase` (the default one's too); nil only if 64 MiB cannot be had for it.
    public static func derived(fromPassphrase passphrase: String) -> NetworkKey? {
        let normalized = ChannelName.nfc(passphrase)
        return Sodium.argon2id(Array(normalized.utf8), salt: salt, length: 32).flatMap(NetworkKey.init(bytes:))
    }

    /// Never the key itself: a short hash, enough to tell two keys apart in logs.
    public var description: String {
        "NetworkKey(\(String(BLAKE2b.hash256(bytes, prefix: Array("dongne.network-key-id".utf8)).hex.prefix(8))))"
    }
}
