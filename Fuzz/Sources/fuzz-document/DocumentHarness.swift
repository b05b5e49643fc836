import DongneCore
import FuzzSupport

/// The key the harness signs with: any fixed key serves.
let signer = SigningKey(seed: [UInt8](repeating: 0x5a, count: 32))!

/// Documents (`UnverifiedDocument(parsing:)`, then `verified()`), as gossip and reconciliation bring them.
///
/// Beyond not crashing: whatever the parser accepts, the signer accepts too (a node never refuses what it
/// would sign, nor signs what it refuses), and signing the parsed body again as another author, with the same
/// stamp bytes, gives the same bytes but for the author and the signature, which then verify.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDocument(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    let bytes = input.rest()
    let document: UnverifiedDocument
    do { document = try UnverifiedDocument(parsing: bytes) } catch {
        _ = error.description
        return 0
    }
    _ = try? document.verified()
    let signed: Document
    // With the same stamp bytes, if any: the field is in the signed bytes, like the body.
    let key = document.stamp.map(signer.stamped) ?? signer
    do { signed = try Document.sign(document.body, created: document.created, by: key) } catch {
        expect(false, "the parser accepted a body the signer refuses: \(error)")
        return 0
    }
    expect(sameButAuthorAndSignature(signed.bytes, bytes, author: document.author), "re-signing changed the body")
    expect((try? Document(verifying: signed.bytes)) == signed, "a document signed here does not verify")
    return 0
}

/// Whether `signed` is `original` with the harness's key and signature in place of the original author's: the
/// author's 32 bytes sit at the same place in both, since everything before them is encoded alike.
func sameButAuthorAndSignature(_ signed: [UInt8], _ original: [UInt8], author: PublicKey) -> Bool {
    let key = signer.publicKey.bytes
    guard signed.count == original.count,
        let start = (0...(signed.count - 32)).first(where: { signed[$0..<($0 + 32)].elementsEqual(key) })
    else { return false }
    var expected = original
    expected.replaceSubrange(start..<(start + 32), with: key)
    expected.replaceSubrange((expected.count - 64)..., with: signed.suffix(64))
    return expected == signed && original[start..<(start + 32)].elementsEqual(author.bytes)
}
