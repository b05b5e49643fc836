"""Thirty hosts on partial views (PROTOCOL.md §2.9), on a LAN of network namespaces with real Avahi daemons.

Every host finds the other 29 with DNS-SD, yet holds sessions with a few neighbours only (HyParView's active
view, 5), and a message still reaches every host, hop by hop. Sessions are counted twice: the neighbours each
node shows (its peer-joined and peer-left lines), and the TCP connections the kernel holds on the node's port
(`ss`), which also counts the short sessions opened for a few membership messages.
"""

import statistics
import time

import pytest

ACTIVE_VIEW = 5
PORT = 4747


def tcp_sessions(lan, host):
    """The established TCP connections of `host`'s node: accepted on its port, or dialled to another's."""
    result = lan.exec(host, "ss", "-tnH", "state", "established")
    assert result.returncode == 0, result.stderr
    count = 0
    for line in result.stdout.splitlines():
        fields = line.split()
        local, remote = fields[-2], fields[-1]
        if local.endswith(f":{PORT}") or remote.endswith(f":{PORT}"):
            count += 1
    return count


def reached(neighbours, start):
    """The hosts reachable from `start` over neighbour links (as either end shows them)."""
    seen, frontier = {start}, [start]
    while frontier:
        host = frontier.pop()
        for other in neighbours.get(host, set()):
            if other not in seen:
                seen.add(other)
                frontier.append(other)
    return seen


@pytest.mark.parametrize("lan", [30], indirect=True)
def test_thirty_hosts_hold_their_active_view_of_sessions_and_every_message_reaches_every_host(lan):
    hosts = list(range(1, 31))
    started = time.monotonic()
    for host in hosts:
        lan.node(host)
    author_of = {}
    for host in hosts:
        lan.say(host, "/whoami")
        author_of[host] = lan.wait_for(host, lambda line: line.get("event") == "whoami", timeout=60)["author"]
    host_of = {author: host for host, author in author_of.items()}
    assert len(host_of) == 30

    def neighbours():
        links = {host: {host_of[author] for author in lan.peers(host) if author in host_of} for host in hosts}
        for host, others in list(links.items()):
            for other in others:
                links[other].add(host)
        return links

    def whole():
        return reached(neighbours(), 1) == set(hosts)

    lan.wait_until(whole, 120, "the neighbours of the thirty hosts form one overlay")
    joined = time.monotonic() - started

    # Twenty seconds of samples, twice a second: what each node shows as neighbours, and its TCP sessions.
    def peer_lines():
        return sum(
            1 for host in hosts for line in lan.lines(host) if line.get("event") in ("peer-joined", "peer-left")
        )

    lines_before = peer_lines()
    shown, held = [], []
    end = time.monotonic() + 20
    while time.monotonic() < end:
        for host in hosts:
            shown.append(len(lan.peers(host)))
            held.append(tcp_sessions(lan, host))
        time.sleep(0.5)
    above = sum(count > ACTIVE_VIEW for count in held)
    changes = peer_lines() - lines_before
    refused_itself = sum(
        1 for host in hosts for line in lan.lines(host) if "itself" in line.get("reason", "")
    )
    # Not only at the samples: replayed line by line, from the first start, no node ever showed more.
    most = {host: lan.most_peers(host) for host in hosts}
    print(
        f"30 hosts: one overlay {joined:.1f} s after the first start; over 20 s, neighbours per node mean "
        f"{statistics.mean(shown):.2f}, most {max(shown)}; TCP sessions per node mean {statistics.mean(held):.2f}, "
        f"most {max(held)}, above {ACTIVE_VIEW} in {above} of {len(held)} samples; {changes} joined or left lines "
        f"in all; {refused_itself} dials of a node's own address; most neighbours a node ever showed at once "
        f"{max(most.values())}"
    )
    # A settled overlay keeps its neighbours: shuffles change spares, not sessions.
    assert changes <= len(hosts), "neighbours do not come and go"
    assert refused_itself <= len(hosts), "a node dials its own address at most once"  # once per address: forgotten
    assert max(shown) <= ACTIVE_VIEW, "no node shows more neighbours than its active view"
    over = {
        host: [
            (line["event"], host_of.get(line["author"]), "to" if line.get("outbound") else "from", line.get("reason", ""))
            for line in lan.lines(host)
            if line.get("event") in ("peer-joined", "peer-left")
        ]
        for host, count in most.items()
        if count > ACTIVE_VIEW
    }
    assert not over, f"nodes that showed more neighbours than their active view, with their joined and left lines: {over}"
    assert statistics.mean(held) <= ACTIVE_VIEW, "the sessions a node holds are its neighbours'"
    # Beside its neighbours, a node may hold for a moment the sessions opened for a few membership messages: a
    # shuffle's answer dialled to its origin, a request to a spare, one in each direction. They are rare and short
    # (above the active view in at most one sample in twenty), but three at once happen: one sample of 8
    # sessions failed a CI run when this bound was ACTIVE_VIEW + 2.
    assert max(held) <= ACTIVE_VIEW + 3
    assert above <= len(held) // 20

    sent = time.monotonic()
    for host in (1, 30):
        lan.say(host, f"h{host}: 서른 호스트 모두 안녕하세요")
    texts = {f"h{host}: 서른 호스트 모두 안녕하세요" for host in (1, 30)}
    for host in hosts:
        lan.wait_until(lambda: texts <= lan.texts(host), 30, f"h{host} shows both messages")
    print(f"both messages on all 30 hosts {time.monotonic() - sent:.2f} s after they were sent")
