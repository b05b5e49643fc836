import DongneCore
import FuzzSupport

/// Canonical CBOR (`CBORDecoder`): any bytes either fail with a `CBORError` or decode to an item whose encoding
/// is exactly those bytes, since the decoder accepts one encoding per item and the encoder writes that one.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCBOR(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    let bytes = input.rest()
    let item: CBOR
    do { item = try CBORDecoder.decode(bytes) } catch {
        _ = error.rule
        return 0
    }
    expect(CBOREncoder.encode(item) == bytes, "decode → encode changed the bytes of \(item)")
    return 0
}
