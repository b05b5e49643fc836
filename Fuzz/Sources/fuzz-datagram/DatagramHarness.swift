import DongneCore
import FuzzSupport

/// The handshake hash of the datagram test vectors (`Protocol/vectors/session.json`), whose datagrams the
/// responder's channel opens: 0, 3, 6, … 189.
let handshakeHash = (0..<64).map { UInt8($0) &* 3 }
/// The initiator's sending key, derived as `DatagramChannel` documents it, to seal datagrams at any counter.
let initiatorKey = BLAKE2b.hash256(Array("i".utf8) + handshakeHash, prefix: Array("dongne.datagram.v1".utf8) + [0])

/// Datagrams (`DatagramChannel.open`, then `GossipMessage(wireBytes:)` as the peer core reads them), three ways
/// from one input:
///
/// 1. the input as a datagram from anyone: it opens only if it is authentic (the vectors' are);
/// 2. the input as a payload: `seal` then `open` gives it back once, and a replay is refused;
/// 3. the input as a script of counters, each sealed with the real key: `open` accepts exactly the counters
///    that RFC 4303's window allows (new, and less than 2,048 below the highest), each once.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDatagram(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    let bytes = input.rest()
    var receiver = DatagramChannel(handshakeHash: handshakeHash, role: .responder)
    if let index = DatagramChannel.receiverIndex(of: bytes), let payload = receiver.open(bytes) {
        expect(bytes.prefix(4).elementsEqual(bigEndian(UInt64(index), bytes: 4)), "a wrong receiver index")
        _ = try? GossipMessage(wireBytes: payload)
    }
    roundTrip(Array(bytes.prefix(DatagramChannel.maximumPayloadBytes)))
    replayScript(bytes)
    return 0
}

/// `seal` then `open` gives the payload back, once.
func roundTrip(_ payload: [UInt8]) {
    var sender = DatagramChannel(handshakeHash: handshakeHash, role: .initiator)
    var receiver = DatagramChannel(handshakeHash: handshakeHash, role: .responder)
    guard let datagram = sender.seal(payload, receiverIndex: 7) else { return expect(false, "seal refused") }
    expect(DatagramChannel.receiverIndex(of: datagram) == 7, "the receiver index did not survive")
    expect(receiver.open(datagram) == payload, "open did not give back the sealed payload")
    expect(receiver.open(datagram) == nil, "a replayed datagram was accepted")
}

/// Each 3 bytes choose a counter: a flag byte (how to move), then a 16-bit step. The counters go to `open` as
/// authentic datagrams, and a plain model of the window says which it must accept.
func replayScript(_ script: [UInt8]) {
    var receiver = DatagramChannel(handshakeHash: handshakeHash, role: .responder)
    let sealing = NoiseCipherState(key: initiatorKey.bytes)
    var highest: UInt64? = nil
    var accepted: Set<UInt64> = []
    var input = script[...]
    while input.count >= 3 {
        let flag = input.removeFirst()
        let step = UInt64(input.removeFirst()) << 8 | UInt64(input.removeFirst())
        let base = highest ?? 0
        let counter: UInt64 =
            switch flag % 4 {
            case 0: base &+ step
            case 1: base >= step ? base - step : 0
            case 2: step
            default: .max - step
            }
        let mayAccept =
            highest.map { counter > $0 || ($0 - counter < ReplayWindow.width && !accepted.contains(counter)) } ?? true
        let header = bigEndian(0, bytes: 4) + bigEndian(counter, bytes: 8)
        let payload = [flag]
        let sealed = try! sealing.encrypt(payload, nonce: counter, associatedData: header)
        let opened = receiver.open(header + sealed)
        expect((opened != nil) == mayAccept, "counter \(counter) after \(base): open said \(opened != nil)")
        guard opened != nil else { continue }
        expect(opened == payload, "an authentic datagram opened to other bytes")
        accepted.insert(counter)
        highest = max(base, counter)
        if highest == counter { accepted = accepted.filter { counter - $0 < ReplayWindow.width } }
    }
}

/// `value`'s last `bytes` bytes, most significant first.
func bigEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
    (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(bytes - 1 - $0))) }
}
