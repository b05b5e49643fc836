"""Direct messages between a dongne node and a peer written from PROTOCOL.md alone (peer.py, direct.py): the
node seals a message to a Python-made key that PyNaCl opens, and opens one PyNaCl sealed to it, both ways with
the read receipt."""

import time

import cbor2
import pytest

from direct import direct, envelope, open_envelope
from peer import CHANNEL, DEADLINE, DIRECT_SPACE, Node, Peer, channel_id, document_id


def opened_from(peer, predicate, timeout=DEADLINE):
    """The inner fields of the first envelope the node sent `peer` that opens for it and satisfies `predicate`."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for _, document in list(peer.received_documents):
            fields = open_envelope(document, peer.identity) if is_envelope(document) else None
            if fields is not None and predicate(fields):
                return fields
        time.sleep(0.05)
    raise AssertionError("no envelope for this peer arrived")


def is_envelope(document):
    return cbor2.loads(document)[0][1] == 8


def test_a_python_made_key_reads_what_the_node_seals_and_the_node_reads_what_python_seals(cleanup):
    node = Node(["--dm-hold-back", "0"])
    cleanup.append(node)
    listening = node.wait_for(lambda line: line.get("event") == "listening")
    # A message for a channel the node has not joined yet is not kept, and this peer does not reconcile.
    node.wait_for(lambda line: line.get("event") == "joined")
    peer = Peer.dial(int(listening["address"].rsplit(":", 1)[1]))
    cleanup.append(peer)
    node_key = peer.handshake()
    peer.gossip([2, sorted([channel_id(CHANNEL), DIRECT_SPACE])])
    peer.start()
    peer.send_batch([peer.signed_message("안녕하세요", name="파이썬")])  # the node learns this key's name
    node.wait_for(lambda line: line.get("text") == "안녕하세요")

    node.type("/dm 파이썬 파이썬만 읽을 수 있어요")
    fields = opened_from(peer, lambda fields: fields[1] == 6)
    assert fields[2] == node_key and fields[9] == "파이썬만 읽을 수 있어요"
    envelopes = [document for _, document in peer.received_documents if is_envelope(document)]
    assert all(node_key not in document and bytes(peer.identity.verify_key) not in document for document in envelopes)

    reply = direct(peer.identity, node_key, "답장이에요")
    peer.send_batch([envelope(reply, node_key, peer.identity)])
    node.wait_for(lambda line: line.get("event") == "direct-notice"
                  and line.get("author") == bytes(peer.identity.verify_key).hex())
    node.type("/dm 파이썬")
    shown = node.wait_for(lambda line: line.get("event") == "direct" and line.get("text") == "답장이에요")
    assert shown["id"] == document_id(reply).hex()
    receipt = opened_from(peer, lambda fields: fields[1] == 7)
    assert receipt[2] == node_key and receipt[9] == [document_id(reply)], "the node read Python's message"
