"""Browses for a DNS-SD service type with python-zeroconf (an mDNS implementation independent of Avahi) for a
few seconds, resolves what it finds, and prints one JSON object per service: its name, IPv4 addresses, port,
the raw TXT record (hex, a space between strings) and its properties. Run on a host of scripts/lan."""

import json
import sys
import time

from zeroconf import ServiceBrowser, ServiceListener, Zeroconf


class Collect(ServiceListener):
    def __init__(self):
        self.names = set()

    def add_service(self, zc, type_, name):
        self.names.add(name)

    def update_service(self, zc, type_, name):
        self.names.add(name)

    def remove_service(self, zc, type_, name):
        self.names.discard(name)


def txt_hex(raw: bytes) -> str:
    parts, index = [], 0
    while index < len(raw):
        length = raw[index]
        parts.append(raw[index : index + 1 + length].hex())
        index += 1 + length
    return " ".join(parts)


def main():
    service_type = sys.argv[1]
    zc = Zeroconf()
    listener = Collect()
    ServiceBrowser(zc, service_type, listener)
    deadline = time.monotonic() + 10
    while not listener.names and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1)  # let every announcement arrive
    for name in sorted(listener.names):
        info = zc.get_service_info(service_type, name, timeout=5000)
        if info is None:
            print(f"cannot resolve {name}", file=sys.stderr)
            continue
        properties = {key.decode(): (value.decode() if value is not None else None) for key, value in info.properties.items()}
        print(
            json.dumps(
                {
                    "name": name,
                    "addresses": info.parsed_addresses(),
                    "port": info.port,
                    "txt": txt_hex(info.text),
                    "properties": properties,
                }
            )
        )
    zc.close()


if __name__ == "__main__":
    main()
