/// Fetching blobs from peers, as a pure value (PROTOCOL.md §3.4): events in, with the time, and directives out.
///
/// For each blob it asks every peer what it holds (`blob want`), learns the manifest from the first answer
/// whose bytes hash to the blob's name, and then keeps a window of chunk requests open with every peer that
/// holds chunks it lacks, so that a blob held by several peers comes from all of them at once. Each peer's
/// window grows by one with every chunk it delivers and halves when a request to it times out; a chunk that
/// timed out is asked of another holder (the slow peer only when no other has it). A peer that leaves gives its
/// requests back. A chunk or manifest whose bytes do not hash to their name is the sender's misbehaviour: the
/// peer core cuts it off, and its requests go to others. A fetch starts from the chunks already stored, so a
/// restarted node asks only for what it lacks.
public struct BlobFetchInstance: Sendable {
    /// The knobs; PROTOCOL.md §3.5 lists the defaults.
    public struct Settings: Sendable, Equatable {
        /// Chunk requests open with one peer at first, and at most (all blobs together).
        public var initialWindow = 4
        public var maximumWindow = 16
        /// A chunk not received this long after it was asked for is asked of another holder.
        public var chunkTimeout: UInt64 = 3_000
        /// While a fetch lacks its manifest or chunks no peer is known to hold, peers are asked again this often.
        public var askInterval: UInt64 = 2_000
        /// Blobs fetched at once; more wait for one of them to end, up to ``maximumWaiting`` (beyond, a new fetch
        /// is abandoned at once).
        public var maximumFetches = 16
        public var maximumWaiting = 256
        /// A fetch that has gained nothing (no manifest, no chunk) for this long is abandoned: no peer holds the
        /// blob (it was never sent, or its holders are gone), and it gives its place to the next.
        public var abandonAfter: UInt64 = 30_000
        /// Chunks asked for or received and not yet confirmed stored, at most (all peers and blobs together): no
        /// chunk is asked for beyond it, so that a disk slower than the network holds up the peers, not the
        /// memory (64 chunks are 3 MiB).
        public var maximumUnstoredChunks = 64

        /// The defaults.
        public init() {}
    }

    /// Something that happened.
    public enum Event: Sendable, Equatable {
        /// Fetch this blob: its manifest if known, and the chunks already stored; only its manifest when the blob
        /// turns out larger than `sizeLimit` bytes. A blob already being fetched is left as it is.
        case fetch(BlobHash, manifest: BlobManifest?, held: [Int], sizeLimit: Int = .max)
        /// Stop fetching this blob.
        case cancel(BlobHash)
        /// A session with this peer is established: it may hold blobs being fetched.
        case peerJoined(PeerID)
        /// The session with this peer ended.
        case peerLeft(PeerID)
        /// A `blob have` or `chunk` message arrived from a peer.
        case received(GossipMessage, from: PeerID)
        /// A chunk a ``Directive/storeChunk(_:index:bytes:)`` handed over is stored (or failed to be: it is
        /// asked for again).
        case stored(BlobHash, index: Int, success: Bool)
        /// Time passed (the time comes with every event).
        case tick
    }

    /// What the peer core must do, in order.
    public enum Directive: Sendable, Equatable {
        /// Send a message to a peer.
        case send(GossipMessage, to: PeerID)
        /// Keep this manifest, checked against its blob's name.
        case storeManifest(BlobManifest)
        /// Keep this chunk of a blob, checked against its name.
        case storeChunk(BlobHash, index: Int, bytes: [UInt8])
        /// How many chunks of a blob are held now, of how many.
        case progress(BlobHash, held: Int, of: Int)
        /// Every chunk of the blob is held: the fetch is over.
        case completed(BlobHash)
        /// The manifest is stored and the blob is larger than the fetch's size limit: the fetch is over.
        case heldBack(BlobHash)
        /// No peer has brought anything of the blob for ``Settings/abandonAfter`` (or too many fetches wait): the
        /// fetch is over, and may be started again later.
        case abandoned(BlobHash)
        /// The peer sent bytes that do not hash to the name they were asked for: cut it off.
        case misbehaved(PeerID, reason: String)
        /// Deliver ``Event/tick`` at this time (or earlier).
        case wake(at: UInt64)
    }

    /// A chunk of a blob.
    struct ChunkKey: Hashable, Sendable {
        let blob: BlobHash
        let index: Int
    }

    /// One chunk request open with a peer.
    struct Request: Sendable, Equatable {
        let peer: PeerID
        let deadline: UInt64
    }

    /// What a fetch knows of one blob.
    struct Fetch: Sendable {
        let sizeLimit: Int
        var manifest: BlobManifest?
        /// The chunks held (known once the manifest is).
        var held: HeldChunks?
        /// Chunks stored before the manifest was known (a fetch resumed by name only).
        var heldBeforeManifest: [Int]
        var requests: [Int: Request] = [:]
        /// What each peer said it holds (`HeldChunks` with no chunk for a peer that holds none).
        var holders: [PeerID: HeldChunks] = [:]
        /// When the fetch last gained something (its manifest, a chunk), or started.
        var lastProgress: UInt64
        /// Peers a chunk timed out with: asked for it again only when no other holder is left.
        var slow: [Int: Set<PeerID>] = [:]
        var nextAsk: UInt64
    }

    /// One peer's window of chunk requests.
    struct Source: Sendable, Equatable {
        var window: Int
        var open = 0
    }

    /// The settings in force.
    public let settings: Settings
    var fetches: [BlobHash: Fetch] = [:]
    /// Fetches in the order they started (requests are handed out in this order), and those waiting for room.
    var order: [BlobHash] = []
    var waiting: [(blob: BlobHash, manifest: BlobManifest?, held: [Int], sizeLimit: Int)] = []
    var sources: [PeerID: Source] = [:]
    /// Chunks handed to the store and not yet confirmed stored.
    var unstored: Set<ChunkKey> = []
    var now: UInt64 = 0
    var output: [Directive] = []

    /// No fetches and no peers.
    public init(settings: Settings = Settings()) { self.settings = settings }

    /// Handles one event at `now` (milliseconds on a clock that never goes back).
    public mutating func handle(_ event: Event, now: UInt64) -> [Directive] {
        self.now = max(self.now, now)
        output = []
        switch event {
        case .fetch(let blob, let manifest, let held, let limit): fetch(blob, manifest: manifest, held: held, sizeLimit: limit)
        case .cancel(let blob): end(blob)
        case .peerJoined(let peer): join(peer)
        case .peerLeft(let peer): leave(peer)
        case .received(let message, let peer):
            guard receive(message, from: peer) else {
                defer { output = [] }
                return output
            }
        case .stored(let blob, let index, let success): stored(blob, index: index, success: success)
        case .tick: tick()
        }
        schedule()
        if let wake = nextWake { output.append(.wake(at: wake)) }
        defer { output = [] }
        return output
    }

    /// The blobs being fetched, and those waiting.
    public var activeFetches: [BlobHash] { order + waiting.map(\.blob) }

    /// Whether this blob is being fetched or waits to be.
    public func isFetching(_ blob: BlobHash) -> Bool {
        fetches[blob] != nil || waiting.contains { $0.blob == blob }
    }

    /// Chunk requests open with a peer (all blobs together), and its window.
    public func window(of peer: PeerID) -> (open: Int, size: Int)? { sources[peer].map { ($0.open, $0.window) } }

    // MARK: Starting and ending

    private mutating func fetch(_ blob: BlobHash, manifest: BlobManifest?, held: [Int], sizeLimit: Int) {
        guard !isFetching(blob) else { return }
        guard fetches.count < settings.maximumFetches else {
            guard waiting.count < settings.maximumWaiting else { return output.append(.abandoned(blob)) }
            return waiting.append((blob, manifest, held, sizeLimit))
        }
        var fetch = Fetch(
            sizeLimit: sizeLimit, manifest: nil, held: nil, heldBeforeManifest: held, lastProgress: now,
            nextAsk: now + settings.askInterval)
        if let manifest { learn(manifest, into: &fetch) }
        if fetch.held?.isComplete == true { return output.append(.completed(blob)) }
        if let manifest, manifest.size > sizeLimit { return output.append(.heldBack(blob)) }
        fetches[blob] = fetch
        order.append(blob)
        for peer in sources.keys.sorted() { ask(peer, about: blob) }
    }

    private func learn(_ manifest: BlobManifest, into fetch: inout Fetch) {
        fetch.manifest = manifest
        fetch.held = HeldChunks(count: manifest.chunks.count, indexes: fetch.heldBeforeManifest)
        fetch.heldBeforeManifest = []
    }

    private mutating func end(_ blob: BlobHash) {
        waiting.removeAll { $0.blob == blob }
        guard let fetch = fetches.removeValue(forKey: blob) else { return }
        order.removeAll { $0 == blob }
        for request in fetch.requests.values { sources[request.peer]?.open -= 1 }
        // Every place free goes to the next waiting: one that ends at once (held back, complete) makes room again.
        while fetches.count < settings.maximumFetches, !waiting.isEmpty {
            let next = waiting.removeFirst()
            self.fetch(next.blob, manifest: next.manifest, held: next.held, sizeLimit: next.sizeLimit)
        }
    }

    // MARK: Peers

    private mutating func join(_ peer: PeerID) {
        guard sources[peer] == nil else { return }
        sources[peer] = Source(window: settings.initialWindow)
        for blob in order { ask(peer, about: blob) }
    }

    private mutating func leave(_ peer: PeerID) {
        guard sources.removeValue(forKey: peer) != nil else { return }
        for blob in order {
            fetches[blob]?.holders[peer] = nil
            let kept = fetches[blob]?.requests.filter { $0.value.peer != peer } ?? [:]
            fetches[blob]?.requests = kept
        }
    }

    private mutating func ask(_ peer: PeerID, about blob: BlobHash) {
        output.append(.send(.blobWant(blob), to: peer))
    }

    private mutating func misbehaved(_ peer: PeerID, _ reason: String) {
        output.append(.misbehaved(peer, reason: reason))
        leave(peer)
    }

    // MARK: Receiving

    /// Whether the message changed anything requests depend on (most a peer could send unasked change
    /// nothing, and cost a look-up).
    private mutating func receive(_ message: GossipMessage, from peer: PeerID) -> Bool {
        guard sources[peer] != nil else { return false }
        switch message {
        case .blobHave(let blob, let manifest, let held):
            guard fetches[blob] != nil else { return false }
            have(blob, manifest: manifest, held: held, from: peer)
            return true
        case .chunk(let blob, let index, let bytes):
            guard fetches[blob]?.manifest != nil else { return false }
            arrived(blob, index: index, bytes: bytes, from: peer)
            return true
        case .batch, .acknowledge, .channels, .reconcile, .request, .reconciled, .datagrams, .blobWant,
            .chunkRequest, .listening, .membership:
            return false
        }
    }

    private mutating func have(_ blob: BlobHash, manifest bytes: [UInt8], held bitmap: [UInt8], from peer: PeerID) {
        guard var fetch = fetches[blob] else { return }
        guard !bytes.isEmpty else {
            fetch.holders[peer] = HeldChunks(count: 0)
            fetches[blob] = fetch
            return dropRequests(of: blob, to: peer, notIn: nil)
        }
        if fetch.manifest == nil {
            guard BlobManifest.hash(of: bytes) == blob, let manifest = try? BlobManifest(parsing: bytes) else {
                return misbehaved(peer, "a manifest that does not match its name")
            }
            learn(manifest, into: &fetch)
            fetch.lastProgress = now
            output.append(.storeManifest(manifest))
            if manifest.size > fetch.sizeLimit {
                fetches[blob] = fetch
                output.append(.heldBack(blob))
                return end(blob)
            }
        }
        guard let manifest = fetch.manifest, bytes == manifest.bytes,
            let held = HeldChunks(bitmap: bitmap, count: manifest.chunks.count)
        else { return misbehaved(peer, "a blob answer that does not match its manifest") }
        fetch.holders[peer] = held
        fetches[blob] = fetch
        dropRequests(of: blob, to: peer, notIn: held)
    }

    /// Requests to a peer for chunks it says it does not hold are dropped at once (its `blob have` answers
    /// them, PROTOCOL.md §3.4), rather than timing out.
    private mutating func dropRequests(of blob: BlobHash, to peer: PeerID, notIn held: HeldChunks?) {
        guard let requests = fetches[blob]?.requests else { return }
        for (index, request) in requests where request.peer == peer && held?.contains(index) != true {
            fetches[blob]?.requests[index] = nil
            sources[peer]?.open -= 1
        }
    }

    private mutating func arrived(_ blob: BlobHash, index: Int, bytes: [UInt8], from peer: PeerID) {
        guard var fetch = fetches[blob], let manifest = fetch.manifest, index < manifest.chunks.count else { return }
        guard bytes.count == BlobChunk.range(index, inBlobOf: manifest.size).count,
            BlobChunk.name(of: bytes) == manifest.chunks[index]
        else { return misbehaved(peer, "a chunk that does not match its name") }
        if fetch.requests[index]?.peer == peer {
            fetch.requests[index] = nil
            sources[peer]?.open -= 1
            if let source = sources[peer] { sources[peer]?.window = min(settings.maximumWindow, source.window + 1) }
        }
        guard fetch.held?.contains(index) == false else { return fetches[blob] = fetch }
        fetch.held?.insert(index)
        fetch.holders[peer]?.insert(index)
        fetch.slow[index] = nil
        fetch.lastProgress = now
        fetches[blob] = fetch
        unstored.insert(ChunkKey(blob: blob, index: index))
        output.append(.storeChunk(blob, index: index, bytes: bytes))
        let held = fetch.held?.heldCount ?? 0
        output.append(.progress(blob, held: held, of: manifest.chunks.count))
        if fetch.held?.isComplete == true {
            output.append(.completed(blob))
            end(blob)
        }
    }

    private mutating func stored(_ blob: BlobHash, index: Int, success: Bool) {
        guard unstored.remove(ChunkKey(blob: blob, index: index)) != nil, !success else { return }
        // Not stored (a full disk, say): the fetch, if it still runs, lacks it again.
        guard var fetch = fetches[blob], let manifest = fetch.manifest, fetch.held?.contains(index) == true else {
            return
        }
        var held = HeldChunks(count: manifest.chunks.count)
        for other in 0..<manifest.chunks.count where other != index && fetch.held?.contains(other) == true {
            held.insert(other)
        }
        fetch.held = held
        fetches[blob] = fetch
    }

    // MARK: Time

    private mutating func tick() {
        for blob in order {
            guard var fetch = fetches[blob] else { continue }
            for (index, request) in fetch.requests where request.deadline <= now {
                fetch.requests[index] = nil
                fetch.slow[index, default: []].insert(request.peer)
                if let source = sources[request.peer] {
                    sources[request.peer] = Source(window: max(1, source.window / 2), open: source.open - 1)
                }
            }
            fetches[blob] = fetch
            if now >= fetch.lastProgress + settings.abandonAfter {
                output.append(.abandoned(blob))
                end(blob)
            } else if now >= fetch.nextAsk {
                askAgain(blob)
            }
        }
    }

    /// Asks again the peers that may have gained what the fetch lacks (or whose answer was lost: a request over
    /// a peer's budget is ignored, not answered): while the manifest is unknown, every peer; afterwards those
    /// not known to hold every chunk still missing.
    private mutating func askAgain(_ blob: BlobHash) {
        guard let fetch = fetches[blob] else { return }
        fetches[blob]?.nextAsk = now + settings.askInterval
        let missing = fetch.held?.missing ?? []
        for peer in sources.keys.sorted() {
            guard let held = fetch.holders[peer], fetch.manifest != nil else {
                ask(peer, about: blob)
                continue
            }
            if !missing.allSatisfy(held.contains) { ask(peer, about: blob) }
        }
    }

    // MARK: Requests

    /// Fills every peer's window with requests for chunks it holds, fetch by fetch in the order they started,
    /// each peer taking the lowest chunks nobody is asked for yet, so that several holders share a blob.
    private mutating func schedule() {
        var room = settings.maximumUnstoredChunks - unstored.count - sources.values.reduce(0) { $0 + $1.open }
        for blob in order where room > 0 {
            guard let fetch = fetches[blob], let held = fetch.held else { continue }
            var wanted = held.missing.filter { fetch.requests[$0] == nil }
            guard !wanted.isEmpty else { continue }
            for peer in sources.keys.sorted() {
                guard let holds = fetch.holders[peer], holds.heldCount > 0, var source = sources[peer],
                    source.open < source.window
                else { continue }
                var picked: [Int] = []
                for index in wanted where source.open < source.window && room > 0 {
                    guard holds.contains(index), !isSlow(peer, for: index, in: fetch) else { continue }
                    picked.append(index)
                    source.open += 1
                    room -= 1
                }
                guard !picked.isEmpty else { continue }
                sources[peer] = source
                wanted.removeAll { picked.contains($0) }
                let deadline = now + settings.chunkTimeout
                for index in picked { fetches[blob]?.requests[index] = Request(peer: peer, deadline: deadline) }
                for request in stride(from: 0, to: picked.count, by: GossipMessage.maximumChunksRequested) {
                    let part = Array(picked[request..<min(picked.count, request + GossipMessage.maximumChunksRequested)])
                    output.append(.send(.chunkRequest(blob, indexes: part), to: peer))
                }
            }
        }
    }

    /// A peer timed out on this chunk and another holder that did not is there to ask.
    private func isSlow(_ peer: PeerID, for index: Int, in fetch: Fetch) -> Bool {
        guard let slow = fetch.slow[index], slow.contains(peer) else { return false }
        return fetch.holders.contains { other, holds in !slow.contains(other) && holds.contains(index) }
    }

    /// When the core next needs ``Event/tick``: the earliest request deadline or asking time; nil with no fetch.
    public var nextWake: UInt64? {
        var earliest: UInt64?
        for blob in order {
            guard let fetch = fetches[blob] else { continue }
            let due = min(
                fetch.requests.values.map(\.deadline).min() ?? .max, fetch.nextAsk,
                fetch.lastProgress + settings.abandonAfter)
            earliest = min(earliest ?? due, due)
        }
        return earliest
    }
}
