/// Datagrams (PROTOCOL.md §2.7): a new batch small enough goes to a peer as one encrypted UDP datagram under
/// keys from the session's handshake hash; anything larger, and every resending, goes over the session.
extension PeerInstance {
    /// A new session gets its datagram keys and an index of its own, and tells the peer where to send.
    mutating func offerDatagrams(on id: PeerID, handshakeHash: [UInt8]) {
        guard let port = datagramPort, let link = links[id] else { return }
        var index = UInt32.random(in: 1...UInt32.max, using: &random)
        while datagramSessions[index] != nil { index = UInt32.random(in: 1...UInt32.max, using: &random) }
        links[id]?.datagram = DatagramChannel(
            handshakeHash: handshakeHash, role: link.isOutbound ? .initiator : .responder)
        links[id]?.datagramIndex = index
        datagramSessions[index] = id
        send(.datagrams(port: port, index: index), to: id)
    }

    /// The peer takes datagrams for this session at its session's host on `port`.
    mutating func routeDatagrams(on id: PeerID, port: UInt16, index: UInt32) {
        guard let host = links[id]?.remote.host else { return }
        links[id]?.datagramRoute = (PeerAddress(host: host, port: port), index)
        followGossip(gossip.handle(.datagramsReady(id, maximumPayloadBytes: DatagramChannel.maximumPayloadBytes)))
    }

    /// Seals batches as datagrams, each sent over its session instead when its peer has no route or it does not
    /// fit.
    mutating func sendDatagrams(_ messages: [(message: GossipMessage, to: PeerID)]) {
        var sealed: [OutgoingDatagram] = []
        for (message, id) in messages {
            // Sealed where the link is kept, as a received datagram is opened.
            guard let route = links[id]?.datagramRoute,
                let bytes = links[id]?.datagram?.seal(message.wireBytes, receiverIndex: route.index)
            else {
                send(message, to: id)
                continue
            }
            // Not a keepalive: the silence limit is the session's, and a peer hears datagrams only as batches.
            sealed.append(OutgoingDatagram(peer: id, address: route.address, bytes: bytes, message: message))
        }
        if !sealed.isEmpty { output.append(.sendDatagrams(sealed)) }
    }

    /// Whether a received datagram names a session this node numbered: the cheapest check, which a shell may
    /// make before handing the datagram over as an event.
    public func mayHoldSession(forDatagram bytes: [UInt8]) -> Bool {
        guard let index = DatagramChannel.receiverIndex(of: bytes) else { return false }
        return datagramSessions[index] != nil
    }

    /// Cheap checks (index, size, replay window, MAC) before anything reads it; a datagram that opens must hold
    /// a batch, which then takes the same path as one from the session. One of a later version's type is
    /// ignored and counted, as over the session.
    mutating func receivedDatagram(_ bytes: [UInt8]) {
        guard let index = DatagramChannel.receiverIndex(of: bytes), let id = datagramSessions[index],
            links[id]?.datagram != nil
        else { return }
        // Opened where the link is kept: a copy of it would copy its replay window on every datagram.
        guard let payload = links[id]?.datagram?.open(bytes) else {
            links[id]?.datagramsDropped += 1
            return
        }
        let message: GossipMessage
        do { message = try GossipMessage(wireBytes: payload) } catch {
            if case .unknownType = error, ignoreUnknownMessage(on: id) { return }
            return close(id, "malformed datagram")
        }
        guard case .batch = message else { return close(id, "malformed datagram") }
        route(message, from: id)
    }
}
