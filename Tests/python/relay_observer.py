"""Sits beside a relay as one more peer and writes down every gossip message the relay sends it, decrypted:
what the LAN test of direct messages checks for the parties' keys and the text.

Run inside the relay's namespace: relay_observer.py PORT OUTFILE SECONDS. It carries the direct-message space
(so the relay forwards envelopes to it), acknowledges what it gets, and stops once it received an envelope
and two quiet seconds passed, or after SECONDS.
"""

import sys
import threading
import time

import cbor2

from peer import CHANNEL, DIRECT_SPACE, Peer, channel_id


def main(port, outfile, seconds):
    peer = Peer.dial(port)
    peer.handshake()
    peer.gossip([2, sorted([channel_id(CHANNEL), DIRECT_SPACE])])
    messages = []
    lock = threading.Lock()
    last_envelope = [None]

    def record(message):
        with lock:
            messages.append(cbor2.dumps(message, canonical=True))
            if message[0] == 0 and any(cbor2.loads(document)[0][1] == 8 for document in message[3]):
                last_envelope[0] = time.monotonic()

    peer.on_message = record
    peer.start()
    end = time.monotonic() + seconds
    while time.monotonic() < end and not peer.closed.is_set():
        with lock:
            seen = last_envelope[0]
        if seen is not None and time.monotonic() - seen > 2:
            break
        time.sleep(0.1)
    peer.close()
    with lock, open(outfile, "w") as out:
        for message in messages:
            out.write(message.hex() + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]))
