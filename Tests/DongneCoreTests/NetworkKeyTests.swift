import DongneCore
import Testing

@Suite struct NetworkKeyTests {
    /// PROTOCOL.md §2.1 gives this key; PyNaCl's argon2id.kdf computes the same (Tests/python/test_session.py).
    @Test func theDefaultNetworkKeyIsTheOneTheSpecificationGives() {
        let key = NetworkKey(passphrase: NetworkKey.defaultPassphrase)!
        #expect(Hex.encode(key.bytes) == "c0848f676830a100dc8a17cde8d7ed82135ef0db84cecd69bfb36add66956223")
    }
}
