import DongneCore
import Testing

/// Identity stamps (PROTOCOL.md §1.13): work that makes every fresh key cost its maker, checked with one hash.
@Suite struct IdentityStampTests {
    let key = SigningKey(seed: [UInt8](repeating: 0x51, count: 32))!

    @Test func aStampsStrengthIsTheLeadingZeroBitsOfItsHashAndWithoutOneItIsZero() {
        let stamp = IdentityStamp.mine(for: key.publicKey, strength: 12)
        let digest = BLAKE2b.hash256(IdentityStamp.prefix + key.publicKey.bytes + stamp.bytes).bytes
        let zeros = digest.prefix(while: { $0 == 0 }).count * 8
            + (digest.first(where: { $0 != 0 })?.leadingZeroBitCount ?? 0)
        #expect(stamp.strength(for: key.publicKey) == zeros)
        #expect(zeros >= 12)
        #expect(IdentityStamp.strength(of: nil, for: key.publicKey) == 0)
        let other = SigningKey(seed: [UInt8](repeating: 0x52, count: 32))!
        #expect(stamp.strength(for: other.publicKey) < 12, "a stamp is bound to its key (a 1 in 4,096 chance aside)")
    }

    @Test func miningFindsTheFirstCounterThatIsStrongEnough() {
        let stamp = IdentityStamp.mine(for: key.publicKey, strength: 10)
        let counter = stamp.bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(stamp == IdentityStamp(counter: counter))
        for earlier in 0..<counter {
            #expect(IdentityStamp(counter: earlier).strength(for: key.publicKey) < 10)
        }
        let lanes = (0..<3).compactMap { lane in
            IdentityStamp.search(for: key.publicKey, strength: 10, first: lane, stride: 3, count: counter / 3 + 2)
        }
        #expect(lanes.contains(stamp), "searching in strided lanes finds the same counter")
    }

    @Test func aSignedDocumentCarriesItsKeysStampAndReadsItBack() throws {
        let stamped = key.stamped(IdentityStamp.mine(for: key.publicKey, strength: 8))
        let body = DocumentBody.message(
            Message(channel: try ChannelName(normalizing: "서울특별시").id, senderName: "민지", content: .text("안녕")))
        let document = try Document.sign(body, created: 1_000, by: stamped)
        let read = try Document(verifying: document.bytes)
        #expect(read.stamp == stamped.stamp)
        #expect(read.stampStrength == stamped.stampStrength)
        #expect(read.stampStrength >= 8)
        let unstamped = try Document(verifying: try Document.sign(body, created: 1_000, by: key).bytes)
        #expect(unstamped.stamp == nil && unstamped.stampStrength == 0)
    }

    @Test func theQuotaDoublesWithEachBitBeyondTheRequiredStrengthAndIsZeroBelowIt() {
        let policy = AdmissionPolicy(requiredStampStrength: 24, authorQuotaBytes: 1_000)
        #expect(policy.quota(forStrength: 23) == 0)
        #expect(policy.quota(forStrength: 24) == 1_000)
        #expect(policy.quota(forStrength: 26) == 4_000)
        #expect(policy.quota(forStrength: 200) == 1_000 << AdmissionPolicy.maximumQuotaDoublings)
        #expect(AdmissionPolicy(requiredStampStrength: 0, authorQuotaBytes: .max).quota(forStrength: 9) == .max)
    }
}
