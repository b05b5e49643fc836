import DongneCore
import DongneNet

/// Datagrams (PROTOCOL.md §2.7): a new batch small enough goes to a peer as one encrypted UDP datagram under
/// keys from the session's handshake hash; anything larger, and every resending, goes over the session.
extension PeerNetwork {
    /// Binds the datagram socket, on `port` when it is free (else any port: the port is announced anyway).
    func openDatagramSocket(port: UInt16) {
        guard datagramSocket == nil, !stopped else { return }
        // Read on this actor's own loop, whose thread then handles the datagram at once.
        let receive: @Sendable ([UInt8], SocketAddress) -> Void = { [weak self] bytes, _ in
            self?.assumeIsolated { $0.receivedDatagram(bytes) }
        }
        datagramSocket =
            (try? UDPSocket(host: datagramHost, port: port, loop: loop, onReceive: receive))
            ?? (try? UDPSocket(host: datagramHost, port: 0, loop: loop, onReceive: receive))
    }

    /// A new session gets its datagram keys and an index of its own, and tells the peer where to send.
    func offerDatagrams(on id: PeerID) {
        openDatagramSocket(port: 0)
        guard var link = links[id], let hash = link.session.handshakeHash, let socket = datagramSocket else { return }
        var index = UInt32.random(in: 1...UInt32.max)
        while datagramSessions[index] != nil { index = UInt32.random(in: 1...UInt32.max) }
        link.datagram = DatagramChannel(handshakeHash: hash, role: link.session.role)
        link.datagramIndex = index
        links[id] = link
        datagramSessions[index] = id
        sendGossip(.datagrams(port: socket.address.port, index: index), to: id)
    }

    /// The peer takes datagrams for this session at its session's host on `port`.
    func routeDatagrams(on id: PeerID, port: UInt16, index: UInt32) {
        guard let host = links[id]?.connection.remote.host, let address = SocketAddress(host: host, port: port)
        else { return }
        links[id]?.datagramRoute = (address, index)
        apply(gossip.handle(.datagramsReady(id, maximumPayloadBytes: DatagramChannel.maximumPayloadBytes)))
    }

    /// Sends batches as datagrams, all in one system call (see `UDPSocket.send(_:)`), each over its session
    /// instead when its peer has no route, it does not fit, or the system refused it.
    func sendDatagrams(_ messages: [(message: GossipMessage, to: PeerID)]) {
        guard !messages.isEmpty else { return }
        var sealed: [(message: GossipMessage, to: PeerID, datagram: (bytes: [UInt8], to: SocketAddress))] = []
        for (message, id) in messages {
            guard datagramSocket != nil, var link = links[id], let route = link.datagramRoute,
                var channel = link.datagram, let datagram = channel.seal(message.wireBytes, receiverIndex: route.index)
            else {
                sendGossip(message, to: id)
                continue
            }
            link.datagram = channel
            links[id] = link
            sealed.append((message, id, (datagram, route.address)))
        }
        guard let socket = datagramSocket, !sealed.isEmpty else { return }
        for index in socket.send(sealed.map(\.datagram)) { sendGossip(sealed[index].message, to: sealed[index].to) }
    }

    /// A datagram arrived: handled at once, then the messages it brought are shown to listeners, all on the
    /// loop's thread that read it (see ``passOnCheckedArrivals()``).
    func receivedDatagram(_ bytes: [UInt8]) {
        handlingDatagram = true
        handleDatagram(bytes)
        handlingDatagram = false
        passOnCheckedArrivals()
    }

    /// Cheap checks (index, size, replay window, MAC) before anything reads it; a datagram that opens must hold
    /// a batch, which then takes the same path as one from the session.
    private func handleDatagram(_ bytes: [UInt8]) {
        guard let index = DatagramChannel.receiverIndex(of: bytes), let id = datagramSessions[index],
            var link = links[id], var channel = link.datagram
        else { return }
        guard let payload = channel.open(bytes) else {
            link.datagramsDropped += 1
            links[id] = link
            return
        }
        link.datagram = channel
        links[id] = link
        guard let message = try? GossipMessage(wireBytes: payload), case .batch = message else {
            return closeLink(id, "malformed datagram")
        }
        handle(message, from: id)
    }
}
