"""A hostile host's DNS-SD flood: unsolicited mDNS announcements of many `_dongne._tcp` services, each with a
valid `v=1` TXT record and an SRV record naming one host, whose A record points at this host. Run on a host of
scripts/lan whose own avahi-daemon is stopped (this script takes port 5353).

    dnssd_flood.py SERVICES ADDRESS PORT [ROUNDS] [--unresolvable]

With --unresolvable, no A record is sent: each service's host never resolves, so every lookup of a node waits
until it gives up. Sends the announcements ROUNDS times (default 2), a packet of at most 20 services every 10 ms: bounded in count
and time, and only to the mDNS group on the namespace's own link. Prints the packets sent.
"""

import socket
import sys
import time

from zeroconf import DNSAddress, DNSOutgoing, DNSPointer, DNSService, DNSText, const

SERVICE_TYPE = "_dongne._tcp.local."
HOST = "flood.local."
TTL = 120
PER_PACKET = 20


def packets(count, address, port, resolvable):
    for first in range(0, count, PER_PACKET):
        out = DNSOutgoing(const._FLAGS_QR_RESPONSE | const._FLAGS_AA)
        for number in range(first, min(count, first + PER_PACKET)):
            name = f"flood-{number}.{SERVICE_TYPE}"
            out.add_answer_at_time(DNSPointer(SERVICE_TYPE, const._TYPE_PTR, const._CLASS_IN, TTL, name), 0)
            out.add_answer_at_time(
                DNSService(name, const._TYPE_SRV, const._CLASS_IN | const._CLASS_UNIQUE, TTL, 0, 0, port, HOST), 0
            )
            out.add_answer_at_time(DNSText(name, const._TYPE_TXT, const._CLASS_IN | const._CLASS_UNIQUE, TTL, b"\x03v=1"), 0)
        if resolvable:
            out.add_answer_at_time(
                DNSAddress(HOST, const._TYPE_A, const._CLASS_IN | const._CLASS_UNIQUE, TTL, socket.inet_aton(address)), 0
            )
        yield from out.packets()


def main():
    count, address, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4].isdigit() else 2
    resolvable = "--unresolvable" not in sys.argv
    assert count <= 5_000 and rounds <= 10, "a bounded flood"
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(address))
    sock.bind(("", 5353))  # mDNS responders ignore answers from any other port
    sent = 0
    for _ in range(rounds):
        for packet in packets(count, address, port, resolvable):
            sock.sendto(packet, ("224.0.0.251", 5353))
            sent += 1
            time.sleep(0.01)
    print(sent)


if __name__ == "__main__":
    main()
