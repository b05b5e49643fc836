import DongneCore
import DongneSimulation
import Testing

/// The blob fetch core in the simulated network (PROTOCOL.md §3.4): every node a real ``PeerInstance``.
@Suite struct BlobFetchTests {
    /// A full mesh of 5 nodes whose uplinks carry 12.5 bytes per millisecond each (100 Mbit/s scaled down a
    /// thousandfold with the blob, so that the run stays short): 1 ms links, no jitter.
    static func scenario(holders: [Int], size: Int = 2 << 20) -> Simulation.Scenario {
        var scenario = Simulation.Scenario()
        scenario.nodes = 5
        scenario.fullMesh = true
        scenario.messagesPerSecond = 0
        scenario.linkDelay = 1
        scenario.jitter = 0
        scenario.uplinkBytesPerMillisecond = 12_500
        scenario.blob = Simulation.BlobWorkload(size: size, holders: holders, fetcher: 4)
        return scenario
    }

    @Test func aBlobHeldByFourPeersComesFromAllOfThemAndFasterThanFromOne() throws {
        var alone = Simulation(Self.scenario(holders: [0]))
        let one = alone.run()
        var swarm = Simulation(Self.scenario(holders: [0, 1, 2, 3]))
        let four = swarm.run()
        #expect(one.blobIntact && four.blobIntact)
        let (slow, fast) = (try #require(one.blobFetched), try #require(four.blobFetched))
        #expect(four.chunksSent.count == 4 && four.chunksSent.values.allSatisfy { $0 >= 5 }, "\(four.chunksSent)")
        #expect(Double(slow) / Double(fast) >= 3, "one holder \(slow) ms, four \(fast) ms")
    }

    @Test func aPeerServingCorruptChunksIsCutOffAndTheBlobComesFromTheOthers() throws {
        var scenario = Self.scenario(holders: [0, 1])
        scenario.blob?.corrupting = [0]
        var simulation = Simulation(scenario)
        let report = simulation.run()
        #expect(report.blobIntact && report.blobFetched != nil)
        #expect((report.chunksSent[0] ?? 0) <= BlobFetchInstance.Settings().initialWindow, "cut off at its first chunk")
        #expect(report.chunksSent[1] ?? 0 >= BlobChunk.count(forSize: 2 << 20) - 1)
    }

    @Test func whenTheHolderLeavesHalfWayTheFetchCompletesFromAnother() throws {
        var scenario = Self.scenario(holders: [0, 1])
        scenario.uplinkBytesPerMillisecond = 1_250  // slow, so that the holder leaves half-way
        scenario.blob?.leaving = (node: 0, after: 400)
        var simulation = Simulation(scenario)
        let report = simulation.run()
        #expect(report.blobIntact && report.blobFetched != nil)
        #expect((report.chunksSent[0] ?? 0) > 0 && (report.chunksSent[1] ?? 0) > 0, "\(report.chunksSent)")
    }

    @Test func heldChunksBitmapsFollowTheSpec() {
        var held = HeldChunks(count: 10)
        held.insert(0)
        held.insert(9)
        #expect(held.bytes == [0b0000_0001, 0b0000_0010] && held.heldCount == 2)
        #expect(HeldChunks(bitmap: [0xff, 0b0000_0100], count: 10) == nil, "a bit past the last chunk")
        #expect(HeldChunks(bitmap: [0xff], count: 10) == nil, "a bitmap of the wrong length")
        #expect(HeldChunks(bitmap: [0xff, 0x03], count: 10)?.isComplete == true)
    }

    @Test func aFetchResumedWithStoredChunksAsksOnlyForTheOthers() throws {
        var generator = SplitMix64(seed: 7)
        let chunks = (0..<4).map { _ in (0..<BlobLimits.chunkBytes).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let manifest = try BlobManifest(
            mediaType: "image/png", size: 4 * BlobLimits.chunkBytes, chunks: chunks.map(BlobChunk.name(of:)), width: 1,
            height: 1, thumbnail: [1])
        var fetch = BlobFetchInstance()
        let peer = PeerID(1)
        _ = fetch.handle(.peerJoined(peer), now: 0)
        _ = fetch.handle(.fetch(manifest.hash, manifest: manifest, held: [0, 2]), now: 0)
        let asked = fetch.handle(
            .received(.blobHave(manifest.hash, manifest: manifest.bytes, held: HeldChunks.all(4).bytes), from: peer),
            now: 1)
        #expect(asked.contains(.send(.chunkRequest(manifest.hash, indexes: [1, 3]), to: peer)))
        let wrong = fetch.handle(.received(.chunk(manifest.hash, index: 1, bytes: chunks[3]), from: peer), now: 2)
        #expect(wrong.contains(.misbehaved(peer, reason: "a chunk that does not match its name")))
    }

    static func manifest(_ seed: UInt64, chunks: Int) throws -> (BlobManifest, [[UInt8]]) {
        var generator = SplitMix64(seed: seed)
        let parts = (0..<chunks).map { _ in
            (0..<BlobLimits.chunkBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        let manifest = try BlobManifest(
            mediaType: "image/png", size: chunks * BlobLimits.chunkBytes, chunks: parts.map(BlobChunk.name(of:)),
            width: 1, height: 1, thumbnail: [1])
        return (manifest, parts)
    }

    @Test func aBlobNoPeerHoldsIsAskedForAgainThenAbandoned() throws {
        let (manifest, _) = try Self.manifest(1, chunks: 2)
        var fetch = BlobFetchInstance()
        let peer = PeerID(1)
        _ = fetch.handle(.peerJoined(peer), now: 0)
        let first = fetch.handle(.fetch(manifest.hash, manifest: nil, held: []), now: 0)
        #expect(first.contains(.send(.blobWant(manifest.hash), to: peer)))
        // The answer was lost (a budget ignores a request unanswered): asked again at the next round.
        let again = fetch.handle(.tick, now: 2_000)
        #expect(again.contains(.send(.blobWant(manifest.hash), to: peer)))
        _ = fetch.handle(.received(.blobHave(manifest.hash, manifest: [], held: []), from: peer), now: 2_001)
        let end = fetch.handle(.tick, now: 30_000)
        #expect(end.contains(.abandoned(manifest.hash)))
        #expect(!fetch.isFetching(manifest.hash) && fetch.nextWake == nil)
    }

    @Test func everyPlaceFreedGoesToAWaitingFetchAndTheQueueIsBounded() throws {
        var settings = BlobFetchInstance.Settings()
        settings.maximumFetches = 1
        settings.maximumWaiting = 2
        var fetch = BlobFetchInstance(settings: settings)
        let blobs = try (0..<4).map { try Self.manifest(UInt64(10 + $0), chunks: 1).0 }
        _ = fetch.handle(.fetch(blobs[0].hash, manifest: nil, held: []), now: 0)
        // Two wait: one complete already (all its chunks stored), one not.
        _ = fetch.handle(.fetch(blobs[1].hash, manifest: blobs[1], held: [0]), now: 0)
        _ = fetch.handle(.fetch(blobs[2].hash, manifest: nil, held: []), now: 0)
        #expect(fetch.handle(.fetch(blobs[3].hash, manifest: nil, held: []), now: 0).contains(.abandoned(blobs[3].hash)))
        let ended = fetch.handle(.cancel(blobs[0].hash), now: 1)
        #expect(ended.contains(.completed(blobs[1].hash)), "the first waiting ends at once")
        #expect(fetch.isFetching(blobs[2].hash) && fetch.activeFetches == [blobs[2].hash], "so the next starts too")
    }

    @Test func aBlobHaveSayingAChunkIsNotHeldFreesItsRequestAtOnce() throws {
        let (manifest, _) = try Self.manifest(2, chunks: 3)
        var fetch = BlobFetchInstance()
        let peer = PeerID(1)
        _ = fetch.handle(.peerJoined(peer), now: 0)
        _ = fetch.handle(.fetch(manifest.hash, manifest: manifest, held: []), now: 0)
        _ = fetch.handle(
            .received(.blobHave(manifest.hash, manifest: manifest.bytes, held: HeldChunks.all(3).bytes), from: peer),
            now: 1)
        #expect(fetch.window(of: peer)?.open == 3)
        let corrected = HeldChunks(count: 3, indexes: [0]).bytes
        _ = fetch.handle(.received(.blobHave(manifest.hash, manifest: manifest.bytes, held: corrected), from: peer), now: 2)
        #expect(fetch.window(of: peer)?.open == 1, "only the request for chunk 0 stays open")
    }

    @Test func messagesAboutBlobsNotBeingFetchedChangeNothing() throws {
        let (manifest, parts) = try Self.manifest(3, chunks: 1)
        var fetch = BlobFetchInstance()
        let peer = PeerID(1)
        _ = fetch.handle(.peerJoined(peer), now: 0)
        #expect(fetch.handle(.received(.chunk(manifest.hash, index: 0, bytes: parts[0]), from: peer), now: 1).isEmpty)
        #expect(fetch.handle(.received(.blobHave(manifest.hash, manifest: [], held: []), from: peer), now: 1).isEmpty)
    }
}
