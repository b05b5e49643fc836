#!/usr/bin/env python3
"""Subscribes to a dongne channel through the node's local API and prints its documentChanges live.

Standard library only: the local API is JSON lines on a Unix socket (Protocol/LOCAL-API.md).

    python3 examples/local-api/subscribe.py 서울특별시 [--socket PATH] [--limit N] [--json]

Without --socket it uses the node on the default data directory ($XDG_RUNTIME_DIR/dongne/api.sock). With --json it
prints each snapshot event as it came; otherwise one line per change. Ends on Ctrl-C or when the node stops.
"""
import argparse
import json
import os
import socket
import sys


def default_socket():
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime:
        sys.exit("no XDG_RUNTIME_DIR: give the node's socket with --socket PATH (DATA/api.sock)")
    return os.path.join(runtime, "dongne", "api.sock")


def lines(connection):
    """The node's objects, one per line."""
    buffered = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            return
        buffered += chunk
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            yield json.loads(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("channel")
    parser.add_argument("--socket", default=None)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()

    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(arguments.socket or default_socket())
    except OSError as error:
        sys.exit(f"no node answers: {error} (start one with `dongne node`)")
    incoming = lines(connection)
    hello = next(incoming)
    if hello.get("event") != "hello" or hello.get("version") != 1:
        sys.exit(f"not a dongne node of version 1: {hello}")
    request = {"id": 1, "op": "listen", "channel": arguments.channel, "limit": arguments.limit}
    connection.sendall(json.dumps(request, ensure_ascii=False).encode() + b"\n")
    for event in incoming:
        if event.get("id") == 1 and not event.get("ok"):
            sys.exit(event["error"]["message"])
        if event.get("event") != "snapshot":
            continue
        if arguments.json:
            print(json.dumps(event, ensure_ascii=False, sort_keys=True), flush=True)
            continue
        for change in event["documentChanges"]:
            document = change["document"]
            body = document.get("text") or document["type"]
            print(f'{change["type"]} {change["newIndex"]}: {document["senderName"]}: {body}', flush=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
