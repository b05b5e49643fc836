import DongneCore
import Testing

@Suite struct DatagramTests {
    static func pair() -> (DatagramChannel, DatagramChannel) {
        let hash = [UInt8](repeating: 0x5a, count: 64)
        return (
            DatagramChannel(handshakeHash: hash, role: .initiator),
            DatagramChannel(handshakeHash: hash, role: .responder)
        )
    }

    @Test func datagramsRoundTripInBothDirectionsWithinTheSizeLimit() throws {
        var (initiator, responder) = Self.pair()
        let sealed = initiator.seal(Array("안녕".utf8), receiverIndex: 7)
        let datagram = try #require(sealed)
        #expect(datagram.count <= DatagramChannel.maximumDatagramBytes)
        let opened = responder.open(datagram)
        #expect(opened == Array("안녕".utf8))
        let sealedBack = responder.seal([1, 2], receiverIndex: 7)
        let back = try #require(sealedBack)
        let openedBack = initiator.open(back)
        #expect(openedBack == [1, 2])
        let sealedOwn = initiator.seal([3], receiverIndex: 7)
        let own = try #require(sealedOwn)
        let openedOwn = initiator.open(own)
        #expect(openedOwn == nil, "a direction's own key does not open it")
        let tooLarge = initiator.seal([UInt8](repeating: 0, count: DatagramChannel.maximumPayloadBytes + 1), receiverIndex: 7)
        #expect(tooLarge == nil)
        let largest = initiator.seal([UInt8](repeating: 0, count: DatagramChannel.maximumPayloadBytes), receiverIndex: 7)
        #expect(largest?.count == 1_200)
        #expect(largest.flatMap(DatagramChannel.receiverIndex(of:)) == 7)
    }

    @Test func replayedForgedAndTooOldDatagramsAreDropped() {
        var (sender, receiver) = Self.pair()
        var datagrams: [[UInt8]] = []
        for index in 0..<3_000 { datagrams.append(sender.seal([UInt8(truncatingIfNeeded: index)], receiverIndex: 7)!) }
        var results: [Bool] = []
        results.append(receiver.open(datagrams[2_999]) != nil)
        results.append(receiver.open(datagrams[2_999]) != nil)  // a replay
        results.append(receiver.open(datagrams[2_000]) != nil)  // reordered but inside the window
        results.append(receiver.open(datagrams[900]) != nil)  // older than the window reaches
        var forged = datagrams[2_500]
        forged[forged.count - 1] ^= 1
        results.append(receiver.open(forged) != nil)
        results.append(receiver.open(datagrams[2_500]) != nil)  // a forgery does not burn the genuine counter
        results.append(receiver.open([1, 2, 3]) != nil)
        var retagged = datagrams[2_600]
        retagged[3] ^= 1
        results.append(receiver.open(retagged) != nil)  // the index is authenticated too
        #expect(results == [true, false, true, false, false, true, false, false])
    }

    @Test func theReplayWindowAcceptsEachRecentCounterExactlyOnce() {
        var random = SplitMix64(seed: 4)
        var window = ReplayWindow()
        var accepted: Set<UInt64> = []
        var highest: UInt64 = 0
        for _ in 0..<20_000 {
            let counter = UInt64.random(in: 0..<6_000, using: &random)
            let expected =
                !accepted.contains(counter)
                && (accepted.isEmpty || counter > highest || highest - counter < ReplayWindow.width)
            #expect(window.mayAccept(counter) == expected, "counter \(counter), highest \(highest)")
            if expected {
                window.accept(counter)
                accepted.insert(counter)
                highest = max(highest, counter)
            }
        }
    }
}
