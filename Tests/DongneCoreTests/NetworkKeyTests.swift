import DongneCore
import Testing

@Suite struct NetworkKeyTests {
    /// PROTOCOL.md §2.1 gives this key; PyNaCl's argon2id.kdf computes the same (Tests/python/test_session.py).
    @Test func theDefaultNetworkKeyIsTheOneTheSpecificationGives() {
        let key = NetworkKey.derived(fromPassphrase: NetworkKey.defaultPassphrase)!
        #expect(Hex.encode(key.bytes) == "c0848f676830a100dc8a17cde8d7ed82135ef0db84cecd69bfb36add66956223")
    }

    /// A node learns the default network's key without hashing (it is known), and any other by Argon2id; a
    /// passphrase is compared in NFC, as it is hashed.
    @Test func theDefaultPassphraseGivesTheKnownKeyAndOthersTheirHash() {
        #expect(NetworkKey(passphrase: NetworkKey.defaultPassphrase) == NetworkKey.derived(fromPassphrase: "dongne"))
        #expect(NetworkKey(passphrase: "우리 카페") == NetworkKey.derived(fromPassphrase: "우리 카페"))
        #expect(NetworkKey(passphrase: "우리 카페") != NetworkKey.defaultNetwork)
        let decomposed = "\u{1112}\u{1161}\u{11AB}"  // 한, as three jamo
        #expect(NetworkKey(passphrase: decomposed) == NetworkKey(passphrase: "한"))
    }
}
