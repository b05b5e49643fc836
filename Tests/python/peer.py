"""An independent peer of PROTOCOL.md part 2 and a `dongne --json` process to talk to, shared by the live-session
tests (test_live_session.py) and the hostile-peer scenarios (hostile.py).

The Python side uses the PyPI package `noiseprotocol` for Noise_XXpsk3_25519_ChaChaPoly_BLAKE2b, PyNaCl for the
identity proofs and document signatures, and cbor2 for the gossip messages, all written from the spec.

Besides the synchronous use of test_live_session.py, a `Peer` can run *live* (`start()`): a thread reads and
decrypts everything the node sends, acknowledges its batches at once, and records the node's acknowledgements,
while another sends a keepalive (an empty `acknowledge`) whenever the peer has sent nothing for a second, so that
the node's 6 s silence limit never closes an idle session. `Node` records the time each of the node's JSON lines
was read (`time.monotonic()`), so that delivery can be timed: send a message, then read when the node printed it.
"""

import hashlib
import json
import os
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
from noise.connection import Keypair, NoiseConnection

import negentropy_ref
from test_session import DEFAULT_NETWORK_KEY

ROOT = pathlib.Path(__file__).resolve().parents[2]
# DONGNE_BINARY names another binary (a copy, so that a rebuild during a run does not swap it underfoot).
DONGNE = pathlib.Path(os.environ.get("DONGNE_BINARY") or ROOT / ".build/debug/dongne")
VECTORS = json.loads((ROOT / "Protocol/vectors/documents.json").read_text())
PREFIX = {name: bytes.fromhex(value) for name, value in VECTORS["prefixes"].items()}
PROOF_PREFIX = b"dongne.session.static.v1\x00"
CHANNEL = "서울특별시"
DEADLINE = 20  # seconds any single wait may take
MAXIMUM_CREATED = 2**53 - 1  # PROTOCOL.md §1.9
MAXIMUM_DOCUMENT_BYTES = 16384  # PROTOCOL.md §1.9


# Identities with stamps (PROTOCOL.md §1.13) found once, so tests need not mine: the seed is 32 times the byte,
# the stamp the counter as 8 big-endian bytes; stamp_strength() checks them.
STAMPED = [(0xd0, 3_700_832, 24), (0xd1, 21_014_464, 26), (0xd2, 21_127_027, 26), (0xd3, 9_600_280, 27),
           (0xd4, 10_499_986, 24), (0xd5, 8_170_539, 24)]


def stamp_strength(public_key: bytes, stamp: bytes) -> int:
    """Leading zero bits of BLAKE2b-256(prefix ‖ author ‖ stamp)."""
    digest = hashlib.blake2b(PREFIX["identityStamp"] + public_key + stamp, digest_size=32).digest()
    return 256 - int.from_bytes(digest, "big").bit_length()


def stamped_identity(index):
    """(nacl SigningKey, stamp bytes, strength) of STAMPED[index]."""
    seed, counter, strength = STAMPED[index]
    return nacl.signing.SigningKey(bytes([seed]) * 32), counter.to_bytes(8, "big"), strength


# A node identity whose first stamp of strength 24 is counter 11,068 (found by trying seeds): a node started with
# it mines the default network's stamp in milliseconds rather than seconds, so tests need not wait for it.
QUICK_STAMP_SEED = bytes([0xE0] * 28 + [0x00, 0x00, 0x07, 0x2C])


def mine_stamp(public_key: bytes, strength: int) -> bytes:
    """The first counter that makes a stamp of `strength` for `public_key` (2^strength hashes on average:
    for small strengths only)."""
    counter = 0
    while stamp_strength(public_key, counter.to_bytes(8, "big")) < strength:
        counter += 1
    return counter.to_bytes(8, "big")


# The direct-message space every node carries (PROTOCOL.md §1.8): BLAKE2b-256 of its prefix alone.
DIRECT_SPACE = hashlib.blake2b(b"dongne.direct.space.v1\x00", digest_size=32).digest()


def channel_id(name: str) -> bytes:
    return hashlib.blake2b(PREFIX["channelID"] + name.encode(), digest_size=32).digest()


def now_ms() -> int:
    return int(time.time() * 1000)


def document_id(document: bytes) -> bytes:
    """The id of a signed document: BLAKE2b-256 of its unsigned bytes (PROTOCOL.md §1.2)."""
    return hashlib.blake2b(PREFIX["documentID"] + document[1:-66], digest_size=32).digest()


def sign_document(identity, unsigned, stamp=None):
    """The signed document of an `unsigned` field map by `identity` (a nacl SigningKey), PROTOCOL.md §1.2; with
    `stamp` at key 5 (§1.13) when given."""
    if stamp is not None:
        unsigned = {**unsigned, 5: stamp}
    encoded = cbor2.dumps(unsigned, canonical=True)
    identifier = hashlib.blake2b(PREFIX["documentID"] + encoded, digest_size=32).digest()
    signature = identity.sign(PREFIX["signature"] + identifier).signature
    return cbor2.dumps([unsigned, signature], canonical=True)


class Node:
    """A `dongne` REPL process with --json output, read on a thread.

    Every line is kept with the time it was read in `timed`; `texts` maps each shown message text to the time
    its first `message` line was read. `wrapper` goes before the binary (e.g. `prlimit --nofile=256:256 --`).
    """

    def __init__(self, extra, binary=None, wrapper=(), stderr=None, seed=None, directory=None):
        # Unless told otherwise, the node asks no stamp of its peers' authors (PROTOCOL.md §1.13): these peers'
        # keys are fresh, and the hostile tests pass the default strength themselves.
        if "--stamp-strength" not in extra:
            extra = ["--stamp-strength", "0"] + list(extra)
        self.binary = pathlib.Path(binary or DONGNE)
        assert self.binary.exists(), f"build first: {self.binary} is missing"
        self.directory = directory or tempfile.mkdtemp(prefix="dongne-live-")
        if seed is not None:  # the node's identity: its key file, as the node writes one (hex, mode 0600)
            descriptor = os.open(f"{self.directory}/identity.key", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as key_file:
                key_file.write(seed.hex() + "\n")
        self.lines = queue.Queue()
        self.seen = []
        self.timed = []  # (monotonic time the line was read, line), appended by the reader thread
        self.texts = {}  # message text -> monotonic time its first `message` line was read
        self.process = subprocess.Popen(
            list(wrapper)
            + [str(self.binary), "--data", self.directory, "--name", "노드", "--port", "0", "--no-dnssd", "--json",
               "--channel", CHANNEL]
            + extra,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    @property
    def pid(self):
        return self.process.pid

    def _read(self):
        for line in self.process.stdout:
            read = time.monotonic()
            try:
                value = json.loads(line)
            except ValueError:
                continue
            self.timed.append((read, value))
            if value.get("event") == "message" and "text" in value:
                self.texts.setdefault(value["text"], read)
            self.lines.put(value)

    def wait_for(self, predicate, deadline=DEADLINE):
        end = time.monotonic() + deadline
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
        raise AssertionError(f"no such line within {deadline} s; saw {self.seen[-5:]}")

    def port(self):
        listening = self.wait_for(lambda line: line.get("event") == "listening")
        return int(listening["address"].rsplit(":", 1)[1])

    def type(self, text):
        self.process.stdin.write((text + "\n").encode())
        self.process.stdin.flush()

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        try:
            self.type("/quit")
            self.process.stdin.close()
            self.process.wait(timeout=10)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


class Peer:
    """One end of a dongne session built from the spec with noiseprotocol, PyNaCl and cbor2."""

    def __init__(self, sock, initiator, network_key=bytes.fromhex(DEFAULT_NETWORK_KEY), identity=None, stamp=None):
        self.sock = sock
        # As a node's own sockets (TCPConnection): without it, a frame sent right after a small one (an
        # acknowledgement from the reader thread) waited for the node's delayed ACK, 40 ms, in Nagle's buffer.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.initiator = initiator
        self.identity = identity or nacl.signing.SigningKey.generate()
        self.stamp = stamp  # put at key 5 of every document this peer signs, when set
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
        # Live mode (start()): one lock orders the frames (their Noise nonces) of every sending thread.
        self.send_lock = threading.Lock()
        self.last_sent = time.monotonic()
        self.sequence = 0
        self.acknowledged = {}  # batch sequence -> monotonic time the node acknowledged it
        self.acknowledgements = threading.Condition()
        self.received_documents = []  # (monotonic time, document bytes) from the node's batches
        self.received_kinds = {}  # gossip message type -> count
        self.datagram_route = None  # the node's [6, UDP port, session index] for this session
        self.closed = threading.Event()
        self.close_reason = None
        self.on_message = None  # called with each gossip message in live mode (on the reader thread)
        self.acknowledge_batches = True
        self.keep_documents = True
        self.received_count = 0  # documents in the node's batches
        self.received_bytes = 0
        # Honest reconciliation (PROTOCOL.md §2.5), when start() is asked for it: this peer's set per channel is
        # the documents it sent there; it answers the node's runs and runs its own (sending `reconciled` at the end).
        self.reconciling = False
        self.items = {}  # channel id -> set of (created, document id) this peer sent
        self.runs = {}  # channel id -> its own Negentropy run as initiator
        self.reconciled = threading.Event()  # set when this peer sent `reconciled` for every channel it runs
        self.reconciled_channels = set()

    @classmethod
    def dial(cls, port, source=None, host="127.0.0.1", timeout=DEADLINE, **options):
        """A connection from `source` (a loopback address of this host, or any) to the node, not yet shaken."""
        sock = socket.create_connection((host, port), timeout=timeout,
                                        source_address=(source, 0) if source else None)
        return cls(sock, initiator=True, **options)

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
        with self.send_lock:
            self.send_frame(self.noise.encrypt(bytes([kind]) + body))
            self.last_sent = time.monotonic()

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

    def sign(self, unsigned):
        """The signed document of an `unsigned` field map (PROTOCOL.md §1.2), with this peer's stamp if any."""
        return sign_document(self.identity, unsigned, self.stamp)

    def signed_message(self, text, created=None, channel=CHANNEL, name="파이썬"):
        """A text message document in the channel, built from the valid vector's layout; `created` in ms."""
        template = next(v for v in VECTORS["valid"] if v["name"] == "message-text")
        unsigned = cbor2.loads(bytes.fromhex(template["unsigned"]))
        unsigned.update({2: bytes(self.identity.verify_key), 3: now_ms() if created is None else created,
                         4: channel_id(channel)})
        unsigned.update({8: name, 9: text})
        unsigned.pop(5)  # the vector author's stamp; sign() puts this peer's
        return self.sign(unsigned)

    def gossip(self, message):
        self.send(1, cbor2.dumps(message, canonical=True))

    # Live mode.

    def open_session(self, channels=(CHANNEL,)):
        """Handshake, then this peer's `channels`; returns the node's identity key. Call start() next."""
        node_key = self.handshake()
        self.channels = [channel_id(name) for name in channels]
        self.gossip([2, self.channels])
        return node_key

    def start(self, keepalive=True, acknowledge=True, reconcile=False):
        """Reads the node's messages on a thread (acknowledging its batches unless `acknowledge` is false), and
        keeps the session alive (unless `keepalive` is false). With `reconcile`, it reconciles as an honest node
        does: it answers the node's reconciliation over the documents it sent, and runs its own for each of its
        channels, ending with `reconciled` (a node that joined a channel for the first time shows the channel's
        messages only once a peer said it has sent all it has)."""
        self.acknowledge_batches = acknowledge
        self.reconciling = reconcile
        self.sock.settimeout(None)
        threading.Thread(target=self._live_read, daemon=True).start()
        if keepalive:
            threading.Thread(target=self._keepalive, daemon=True).start()
        return self

    def _live_read(self):
        try:
            while True:
                kind, body = self.receive()
                if kind == 2:
                    raise ConnectionError("goodbye from the node")
                if kind != 1:
                    raise ConnectionError(f"unexpected transport message kind {kind}")
                message = cbor2.loads(body)
                read = time.monotonic()
                self.received_kinds[message[0]] = self.received_kinds.get(message[0], 0) + 1
                if message[0] == 0:
                    self.received_count += len(message[3])
                    self.received_bytes += sum(len(document) for document in message[3])
                    if self.keep_documents:
                        self.received_documents.extend((read, document) for document in message[3])
                    if self.acknowledge_batches:
                        self.gossip([1, [message[1]]])
                    self._acknowledge_received(message[2], read)
                elif message[0] == 1:
                    self._acknowledge_received(message[1], read)
                elif message[0] == 6:
                    self.datagram_route = message
                elif message[0] == 3 and self.reconciling:
                    self._reconcile(message)
                elif message[0] == 2 and self.reconciling:
                    self._node_channels(message[1])
                if self.on_message:
                    self.on_message(message)
        except Exception as error:  # noqa: BLE001 - any end of the session ends the reader
            self.close_reason = f"{type(error).__name__}: {error}"
        finally:
            self.closed.set()
            with self.acknowledgements:
                self.acknowledgements.notify_all()

    def _node_channels(self, channels):
        """Starts a run for each channel both ends carry that this session has not reconciled yet (§2.5 *When*);
        abandons runs of channels the node no longer carries."""
        for channel in list(self.runs):
            if channel not in channels:
                del self.runs[channel]
        for channel in getattr(self, "channels", []):
            if channel in channels and channel not in self.runs and channel not in self.reconciled_channels:
                with self.send_lock:
                    items = list(self.items.get(channel, ()))
                run = negentropy_ref.Negentropy(items, negentropy_ref.DONGNE_FRAME_SIZE_LIMIT)
                self.runs[channel] = run
                self.gossip([3, channel, True, run.initiate()])

    def _reconcile(self, message):
        _, channel, from_initiator, payload = message
        if from_initiator:  # the node's run: answer as its responder, over a set taken afresh
            with self.send_lock:
                items = list(self.items.get(channel, ()))
            responder = negentropy_ref.Negentropy(items, negentropy_ref.DONGNE_FRAME_SIZE_LIMIT)
            reply, _, _ = responder.reconcile(payload)
            self.gossip([3, channel, False, reply])
            return
        run = self.runs.get(channel)
        if run is None:
            return
        reply, _, _ = run.reconcile(payload)  # this peer offers nothing: what it has it sent in batches already
        if reply is None:
            del self.runs[channel]
            self.reconciled_channels.add(channel)
            self.gossip([5, channel])
            if not self.runs:
                self.reconciled.set()
        else:
            self.gossip([3, channel, True, reply])

    def _acknowledge_received(self, sequences, read):
        if not sequences:
            return
        with self.acknowledgements:
            for sequence in sequences:
                self.acknowledged.setdefault(sequence, read)
            self.acknowledgements.notify_all()

    def _keepalive(self):
        while not self.closed.wait(0.5):
            if time.monotonic() - self.last_sent >= 1.0:
                try:
                    self.gossip([1, []])
                except OSError:
                    return

    def send_batch(self, documents):
        """Sends one batch of documents; its sequence number."""
        items = []
        if self.reconciling:
            for document in documents:
                unsigned = cbor2.loads(document)[0]
                if 4 in unsigned:
                    items.append((unsigned[4], (unsigned[3], document_id(document))))
        with self.send_lock:
            for channel, item in items:
                self.items.setdefault(channel, set()).add(item)
            self.sequence += 1
            sequence = self.sequence
            self.send_frame(self.noise.encrypt(b"\x01" + cbor2.dumps([0, sequence, [], list(documents)],
                                                                    canonical=True)))
            self.last_sent = time.monotonic()
        return sequence

    def wait_acknowledged(self, sequences, timeout=DEADLINE):
        """Whether the node acknowledged every batch of `sequences` within `timeout` seconds."""
        end = time.monotonic() + timeout
        with self.acknowledgements:
            while not all(sequence in self.acknowledged for sequence in sequences):
                left = end - time.monotonic()
                if left <= 0 or self.closed.is_set():
                    return False
                self.acknowledgements.wait(min(left, 0.5))
        return True

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def dial_live(port, source=None, attempts=1, pauses=(1, 2, 4), until=None, reconcile=True, **options):
    """A live session with the node from `source`, reconciling as an honest peer does unless `reconcile` is
    false: (peer, tries). Dials again after a refused or failed handshake
    up to `attempts` times in all, pausing as a node's redial does (1 s, doubling to 4 s), never past `until`
    (a monotonic time). Raises the last error when no attempt succeeded."""
    error = None
    for attempt in range(attempts):
        if until is not None and time.monotonic() >= until:
            break
        peer = None
        try:
            peer = Peer.dial(port, source=source, timeout=5, **options)
            peer.open_session()
            return peer.start(reconcile=reconcile), attempt + 1
        except (OSError, AssertionError, ValueError, Exception) as failure:  # noqa: BLE001
            error = failure
            if peer:
                peer.close()
        if attempt + 1 < attempts:
            pause = pauses[min(attempt, len(pauses) - 1)]
            if until is not None:
                pause = min(pause, max(0.0, until - time.monotonic()))
            time.sleep(pause)
    raise error or TimeoutError("no time left to dial")


def percentile(values, fraction):
    """Nearest-rank percentile of `values` (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-int(fraction * 1000) * len(ordered) // 1000))
    return ordered[min(rank, len(ordered)) - 1]


def measure_delivery(node, peer, label, count=40, gap=0.05, settle=10.0):
    """Sends `count` text messages `gap` seconds apart, each in its own batch; the delay of each is the time the
    node's `message` line for its text was read minus the time it was sent. Waits up to `settle` seconds after
    the last send for the rest. Returns the figures (delays in ms)."""
    sent = {}
    start = time.monotonic()
    for index in range(count):
        due = start + index * gap
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        text = f"{label} {index} {os.urandom(4).hex()}"
        document = peer.signed_message(text)
        began = time.monotonic()  # before the send, so that a delay is never negative
        try:
            peer.send_batch([document])
        except OSError:
            break
        sent[text] = began
    end = time.monotonic() + settle
    while time.monotonic() < end and not all(text in node.texts for text in sent):
        time.sleep(0.02)
    delays = [(node.texts[text] - when) * 1000 for text, when in sent.items() if text in node.texts]
    return {
        "sent": count,
        "written": len(sent),
        "arrived": len(delays),
        "p50_ms": percentile(delays, 0.50),
        "p99_ms": percentile(delays, 0.99),
        "max_ms": max(delays) if delays else None,
        "delays_ms": [round((node.texts[text] - when) * 1000, 1) if text in node.texts else None
                      for text, when in sent.items()],
        "texts": list(sent),
    }
