import DongneCore
import FuzzSupport

/// Gossip messages (`GossipMessage(wireBytes:)`), as they arrive in a session message or a datagram: a message
/// that decodes re-encodes to the same bytes, its byte count is counted right without encoding, and a batch's
/// documents go on to the document parser, as the peer core sends them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGossip(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    let bytes = input.rest()
    guard let message = try? GossipMessage(wireBytes: bytes) else { return 0 }
    expect(message.wireBytes == bytes, "decode → encode changed the bytes of \(message)")
    expect(message.wireByteCount == bytes.count, "wireByteCount \(message.wireByteCount) for \(bytes.count) bytes")
    if case .batch(_, let documents, _, _) = message {
        for document in documents { _ = try? UnverifiedDocument(parsing: document) }
    }
    return 0
}
