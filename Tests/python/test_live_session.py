"""A live session between a running `dongne` node and an independent implementation of PROTOCOL.md part 2.

The Python side uses the PyPI package `noiseprotocol` for Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b, PyNaCl for
the identity proofs and document signatures, and cbor2 for the gossip messages, all written from the spec. It
takes both roles: it dials the node (the node responds) and the node dials it (`--peer`, the node initiates).
In each, the two sides must agree on every byte: the handshake, the identity proofs, the framed transport
messages, and a signed document the Python side sends, which the node must show in its REPL and acknowledge.
"""

import hashlib
import socket

import cbor2
import nacl.signing
import pytest

from peer import CHANNEL, DEADLINE, DIRECT_SPACE, PREFIX, Node, Peer, channel_id


def exchange(node, peer):
    """After the handshake: both sides' channels, one document each way of the test, acknowledgement, goodbye."""
    node_key = peer.handshake()
    whoami = node.wait_for(lambda line: line.get("event") == "whoami")
    assert node_key.hex() == whoami["author"], "the proof is for the node's own identity"

    # The node announces its channels when the session starts and again when they change (a node that dials at
    # start may do so before its REPL has joined the channel). A node keeping partial views tells a peer that
    # dialled it once the peer shows it keeps none (its first message), or has said nothing for 1 s since the
    # handshake, as this peer, which waits for the node's channels before it says its own (PROTOCOL.md §2.9).
    messages = peer.receive_gossip_until(lambda m: m[0] == 2 and channel_id(CHANNEL) in m[1])
    expected = sorted([channel_id(CHANNEL), DIRECT_SPACE])
    assert messages[-1] == [2, expected], "the node announces the channel it carries, and the direct-message space"
    # PROTOCOL.md §2.4 *Profiles*: besides its channels and datagram route, the node offers its own profile.
    batches = [m for m in messages if m[0] == 0]
    # PROTOCOL.md §2.9: a node that listens keeps partial views: it says first the TCP port it listens on, and may
    # ask a peer it dialled to be its neighbour (membership messages, types 12 to 19, which this peer ignores).
    assert all(m[0] in (0, 2, 6) or 11 <= m[0] <= 19 for m in messages), "channels, route, profile, membership"
    listening = [m for m in messages if m[0] == 11]
    assert len(listening) <= 1 and (not listening or messages[0] == listening[0] and 0 < listening[0][1] < 65536)
    for batch in batches:
        for signed in batch[3]:
            unsigned, _ = cbor2.loads(signed)
            assert unsigned[1] == 5 and unsigned[2] == node_key, "the node's own profile (kind 5)"
    peer.send(1, cbor2.dumps([2, [channel_id(CHANNEL)]], canonical=True))
    node.wait_for(lambda line: line.get("event") == "peer-joined")
    # PROTOCOL.md §2.4: a message of a type above 19 is a later version's: ignored and counted, not fatal.
    peer.send(1, cbor2.dumps([99, "from a later version", {1: b"new"}], canonical=True))
    document = peer.signed_message("파이썬에서 왔어요")
    peer.send(1, cbor2.dumps([0, 1, [], [document]], canonical=True))

    shown = node.wait_for(lambda line: line.get("text") == "파이썬에서 왔어요")
    assert shown["author"] == bytes(peer.identity.verify_key).hex()
    acknowledged = lambda m: (m[0] == 1 and 1 in m[1]) or (m[0] == 0 and 1 in m[2])  # noqa: E731
    peer.receive_gossip_until(acknowledged)

    node.type("노드가 답해요")
    batch = peer.receive_gossip_until(
        lambda m: m[0] == 0 and m[3] and cbor2.loads(m[3][0])[0].get(9) == "노드가 답해요")[-1]
    # PROTOCOL.md §2.4: the batch names the peers it went to by tag, the first 8 bytes of their identity keys.
    assert batch[4:] == [[bytes(peer.identity.verify_key)[:8]]], "the batch names this peer's tag"
    unsigned, signature = cbor2.loads(batch[3][0])
    assert unsigned[9] == "노드가 답해요" and unsigned[2] == node_key
    document_id = hashlib.blake2b(PREFIX["documentID"] + cbor2.dumps(unsigned, canonical=True), digest_size=32)
    nacl.signing.VerifyKey(node_key).verify(PREFIX["signature"] + document_id.digest(), signature)

    peer.send(2)  # goodbye
    node.wait_for(lambda line: line.get("event") == "peer-left")


def test_python_dials_the_node(cleanup):
    node = Node([])
    cleanup.append(node)
    node.type("/whoami")
    listening = node.wait_for(lambda line: line.get("event") == "listening")
    port = int(listening["address"].rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
    cleanup.append(sock)
    exchange(node, Peer(sock, initiator=True))


def test_the_node_dials_python(cleanup):
    server = socket.socket()
    cleanup.append(server)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(DEADLINE)
    node = Node(["--peer", f"127.0.0.1:{server.getsockname()[1]}"])
    cleanup.append(node)
    node.type("/whoami")
    sock, _ = server.accept()
    cleanup.append(sock)
    sock.settimeout(DEADLINE)
    exchange(node, Peer(sock, initiator=False))


def test_a_wrong_network_key_gets_no_identity(cleanup):
    node = Node([])
    cleanup.append(node)
    listening = node.wait_for(lambda line: line.get("event") == "listening")
    sock = socket.create_connection(("127.0.0.1", int(listening["address"].rsplit(":", 1)[1])), timeout=DEADLINE)
    cleanup.append(sock)
    peer = Peer(sock, initiator=True, network_key=bytes(32))  # another network's key
    peer.send_frame(peer.noise.write_message(b""))
    peer.noise.read_message(peer.read_frame())
    peer.send_frame(peer.noise.write_message(peer.proof()))
    node.wait_for(lambda line: line.get("event") == "peer-refused")
    sock.settimeout(5)
    assert sock.recv(65536) == b"", "the node closes without a transport message, so without its identity"
