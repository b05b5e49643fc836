/// A node's own envelopes of the direct-message space leave by one peer first (a stem, in the spirit of
/// Dandelion, BIP 156): sent to every peer at once, an envelope would come to each of them from its writer's node
/// alone, and tell them all who wrote it. Sent to one random peer, it comes to everyone else from that peer, which
/// relays it like any other: only that first relay sees it come from its writer's node (PROTOCOL.md §1.8.1).
extension PeerInstance {
    /// Sends `document` of `channel` to one random established peer that carries the channel, if any; gossip
    /// spreads it from there.
    /// When none does, the document waits for the first that says it does.
    mutating func stem(_ document: GossipDocument, in channel: ChannelID, photo: BlobHash? = nil) {
        if let photo { rememberStemmedPhoto(photo, peer: nil) }
        guard let peer = peers(carrying: channel).randomElement(using: &random) else {
            waitingStems.append((document, channel, photo))
            if waitingStems.count > Self.maximumWaitingStems { waitingStems.removeFirst() }
            return
        }
        if let photo { rememberStemmedPhoto(photo, peer: peer) }
        offer([document], to: peer)
    }

    /// A peer said which channels it carries: the documents waiting for a first relay in those channels go now.
    mutating func sendWaitingStems() {
        guard !waitingStems.isEmpty else { return }
        let waiting = waitingStems
        waitingStems = []
        for (document, channel, photo) in waiting {
            stem(document, in: channel, photo: photo)
            // The shell's asks after the stem found no peer then: the writer asks now, as relays will.
            if let photo { askForOwnPhoto(photo) }
        }
    }

    /// How long a sealed photo of this node's own is served to its envelope's first relay alone: time for that
    /// relay to fetch a photo of a few MiB on a LAN, and shorter than the time a fetch that gains nothing lasts
    /// (`BlobFetchInstance`'s 30 s), so that the other relays, asking again every 2 s meanwhile, get it from here
    /// if they cannot from the first relay.
    public static let stemPhotoServing: UInt64 = 20_000
    /// The most sealed photos of its own a node remembers the first relay of; the oldest are forgotten first.
    static let maximumStemmedPhotos = 256

    /// Whether a request from `peer` for `blob` is to be answered as if this node held nothing of it: `blob` is
    /// the sealed photo of an envelope of its own, and `peer` is not the first relay it went to, while that relay
    /// is connected and ``stemPhotoServing`` has not passed. Otherwise every peer that asked would learn that the
    /// photo came from here first, which the stem hides (PROTOCOL.md §1.8.1).
    mutating func hidesOwnPhoto(_ blob: BlobHash, from peer: PeerID) -> Bool {
        guard let stemmed = stemmedPhotos[blob] else { return false }
        let stemPeerGone = stemmed.peer.map { links[$0]?.peer == nil } ?? false
        guard !stemPeerGone, now < stemmed.since + Self.stemPhotoServing else {
            stemmedPhotos[blob] = nil
            return false
        }
        return stemmed.peer != peer
    }

    /// Asks every established peer that carries the space for this node's own sealed photo (answers are
    /// ignored: nothing is fetched), as every relay that stores the envelope asks for it.
    mutating func askForOwnPhoto(_ photo: BlobHash) {
        for peer in peers(carrying: DirectSpace.id) { send(.blobWant(photo), to: peer) }
    }

    private mutating func rememberStemmedPhoto(_ photo: BlobHash, peer: PeerID?) {
        if stemmedPhotos[photo] == nil, stemmedPhotos.count >= Self.maximumStemmedPhotos,
            let oldest = stemmedPhotos.min(by: { $0.value.since < $1.value.since })?.key
        {
            stemmedPhotos[oldest] = nil
        }
        stemmedPhotos[photo] = (peer, now)
    }

    private func peers(carrying channel: ChannelID) -> [PeerID] {
        links.keys.sorted().filter {
            links[$0]?.peer != nil && links[$0]?.drainingUntil == nil && gossip.channels(of: $0).contains(channel)
        }
    }
}
