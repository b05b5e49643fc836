"""A live session between a running `dongne` node and an independent implementation of PROTOCOL.md part 2.

The Python side uses the PyPI package `noiseprotocol` for Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b, PyNaCl for
the identity proofs and document signatures, and cbor2 for the gossip messages, all written from the spec. It
takes both roles: it dials the node (the node responds) and the node dials it (`--peer`, the node initiates).
In each, the two sides must agree on every byte: the handshake, the identity proofs, the framed transport
messages, and a signed document the Python side sends, which the node must show in its REPL and acknowledge.
"""

import hashlib
import json
import pathlib
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import cbor2
import nacl.public
import nacl.signing
import pytest
from noise.connection import Keypair, NoiseConnection

from test_session import DEFAULT_NETWORK_KEY

ROOT = pathlib.Path(__file__).resolve().parents[2]
DONGNE = ROOT / ".build/debug/dongne"
VECTORS = json.loads((ROOT / "Protocol/vectors/documents.json").read_text())
PREFIX = {name: bytes.fromhex(value) for name, value in VECTORS["prefixes"].items()}
PROOF_PREFIX = b"dongne.session.static.v1\x00"
CHANNEL = "서울특별시"
DEADLINE = 20  # seconds any single wait may take


def channel_id(name: str) -> bytes:
    return hashlib.blake2b(PREFIX["channelID"] + name.encode(), digest_size=32).digest()


class Node:
    """A `dongne` REPL process with --json output, read on a thread."""

    def __init__(self, extra):
        assert DONGNE.exists(), f"build first: {DONGNE} is missing"
        self.directory = tempfile.mkdtemp(prefix="dongne-live-")
        self.lines = queue.Queue()
        self.seen = []
        self.process = subprocess.Popen(
            [str(DONGNE), "--data", self.directory, "--name", "노드", "--port", "0", "--no-dnssd", "--json", "--channel", CHANNEL]
            + extra,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                pass

    def wait_for(self, predicate):
        end = time.monotonic() + DEADLINE
        for line in self.seen:
            if predicate(line):
                return line
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            self.seen.append(line)
            if predicate(line):
                return line
        raise AssertionError(f"no such line within {DEADLINE} s; saw {self.seen[-5:]}")

    def type(self, text):
        self.process.stdin.write((text + "\n").encode())
        self.process.stdin.flush()

    def stop(self):
        try:
            self.type("/quit")
            self.process.stdin.close()
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


class Peer:
    """One end of a dongne session built from the spec with noiseprotocol, PyNaCl and cbor2."""

    def __init__(self, sock, initiator, network_key=bytes.fromhex(DEFAULT_NETWORK_KEY)):
        self.sock = sock
        self.initiator = initiator
        self.identity = nacl.signing.SigningKey.generate()
        self.static = nacl.public.PrivateKey.generate()
        self.noise = NoiseConnection.from_name(b"Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b")
        self.noise.set_as_initiator() if initiator else self.noise.set_as_responder()
        self.noise.set_prologue(b"dongne/1")
        self.noise.set_psks(psk=network_key)
        self.noise.set_keypair_from_private_bytes(Keypair.STATIC, bytes(self.static))
        self.noise.start_handshake()
        # noiseprotocol drops its handshake state when the handshake ends: keep it to read the peer's static key.
        self.handshake_state = self.noise.noise_protocol.handshake_state
        self.buffer = b""

    def proof(self):
        signature = self.identity.sign(PROOF_PREFIX + bytes(self.static.public_key)).signature
        return cbor2.dumps({1: bytes(self.identity.verify_key), 2: signature}, canonical=True)

    def remote_static(self):
        return bytes(self.handshake_state.rs.public_bytes)

    def send_frame(self, body):
        self.sock.sendall(len(body).to_bytes(2, "big") + body)

    def read_frame(self):
        while True:
            if len(self.buffer) >= 2:
                length = int.from_bytes(self.buffer[:2], "big")
                if len(self.buffer) >= 2 + length:
                    frame, self.buffer = self.buffer[2 : 2 + length], self.buffer[2 + length :]
                    return frame
            chunk = self.sock.recv(65536)
            assert chunk, "the node closed the connection"
            self.buffer += chunk

    def handshake(self):
        """Runs XXpsk3 with identity proofs; returns the node's identity key, checked against its proof."""
        if self.initiator:
            self.send_frame(self.noise.write_message(b""))
            assert self.noise.read_message(self.read_frame()) == b""
            self.send_frame(self.noise.write_message(self.proof()))
            kind, proof = self.receive()
            assert kind == 0, "the responder's first transport message is its identity proof"
        else:
            assert self.noise.read_message(self.read_frame()) == b""
            self.send_frame(self.noise.write_message(b""))
            proof = self.noise.read_message(self.read_frame())
            self.send(0, self.proof())
        assert self.noise.handshake_finished
        fields = cbor2.loads(proof)
        assert cbor2.dumps(fields, canonical=True) == proof and set(fields) == {1, 2}
        nacl.signing.VerifyKey(fields[1]).verify(PROOF_PREFIX + self.remote_static(), fields[2])
        return fields[1]

    def send(self, kind, body=b""):
        self.send_frame(self.noise.encrypt(bytes([kind]) + body))

    def receive(self):
        plaintext = self.noise.decrypt(self.read_frame())
        return plaintext[0], plaintext[1:]

    def receive_gossip_until(self, predicate):
        """Gossip messages from the node until one satisfies `predicate`; all of them."""
        messages = []
        self.sock.settimeout(DEADLINE)
        while True:
            kind, body = self.receive()
            assert kind == 1, f"unexpected transport message kind {kind}"
            message = cbor2.loads(body)
            assert cbor2.dumps(message, canonical=True) == body, "gossip is canonical CBOR"
            messages.append(message)
            if predicate(message):
                return messages

    def signed_message(self, text):
        """A text message document in the channel, built from the valid vector's layout."""
        template = next(v for v in VECTORS["valid"] if v["name"] == "message-text")
        unsigned = cbor2.loads(bytes.fromhex(template["unsigned"]))
        unsigned.update({2: bytes(self.identity.verify_key), 3: int(time.time() * 1000), 4: channel_id(CHANNEL)})
        unsigned.update({8: "파이썬", 9: text})
        encoded = cbor2.dumps(unsigned, canonical=True)
        document_id = hashlib.blake2b(PREFIX["documentID"] + encoded, digest_size=32).digest()
        signature = self.identity.sign(PREFIX["signature"] + document_id).signature
        return cbor2.dumps([unsigned, signature], canonical=True)


def exchange(node, peer):
    """After the handshake: both sides' channels, one document each way of the test, acknowledgement, goodbye."""
    node_key = peer.handshake()
    whoami = node.wait_for(lambda line: line.get("event") == "whoami")
    assert node_key.hex() == whoami["author"], "the proof is for the node's own identity"
    node.wait_for(lambda line: line.get("event") == "peer-joined")

    # The node announces its channels when the session starts and again when they change (a node that dials at
    # start may do so before its REPL has joined the channel).
    messages = peer.receive_gossip_until(lambda m: m[0] == 2 and m[1])
    assert messages[-1] == [2, [channel_id(CHANNEL)]], "the node announces the channel it carries"
    assert all(m[0] in (2, 6) for m in messages), "channels and the datagram route come first"
    peer.send(1, cbor2.dumps([2, [channel_id(CHANNEL)]], canonical=True))
    # PROTOCOL.md §2.4: a message of a type above 6 is a later version's: ignored and counted, not fatal.
    peer.send(1, cbor2.dumps([99, "from a later version", {1: b"new"}], canonical=True))
    document = peer.signed_message("파이썬에서 왔어요")
    peer.send(1, cbor2.dumps([0, 1, [], [document]], canonical=True))

    shown = node.wait_for(lambda line: line.get("text") == "파이썬에서 왔어요")
    assert shown["author"] == bytes(peer.identity.verify_key).hex()
    acknowledged = lambda m: (m[0] == 1 and 1 in m[1]) or (m[0] == 0 and 1 in m[2])  # noqa: E731
    peer.receive_gossip_until(acknowledged)

    node.type("노드가 답해요")
    batch = peer.receive_gossip_until(lambda m: m[0] == 0 and m[3])[-1]
    # PROTOCOL.md §2.4: the batch names the peers it went to by tag, the first 8 bytes of their identity keys.
    assert batch[4:] == [[bytes(peer.identity.verify_key)[:8]]], "the batch names this peer's tag"
    unsigned, signature = cbor2.loads(batch[3][0])
    assert unsigned[9] == "노드가 답해요" and unsigned[2] == node_key
    document_id = hashlib.blake2b(PREFIX["documentID"] + cbor2.dumps(unsigned, canonical=True), digest_size=32)
    nacl.signing.VerifyKey(node_key).verify(PREFIX["signature"] + document_id.digest(), signature)

    peer.send(2)  # goodbye
    node.wait_for(lambda line: line.get("event") == "peer-left")


@pytest.fixture
def cleanup():
    things = []
    yield things
    for thing in reversed(things):
        thing.stop() if isinstance(thing, Node) else thing.close()


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
