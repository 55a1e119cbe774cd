"""Relay side of test_kea_serve (run inside the namespace): send each hex packet to Kea, print the offered address or '-'."""

from __future__ import annotations

import socket
import sys
import time


def main(relay: str, packets: list[str]) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((relay, 67))
    sock.settimeout(1.0)
    for index, packet in enumerate(packets):
        tries = 10 if index == 0 else 2  # the first ask also waits for Kea to start
        offer = "-"
        for _ in range(tries):
            sock.sendto(bytes.fromhex(packet), ("127.0.0.1", 67))
            try:
                data = sock.recv(2048)
            except TimeoutError:
                time.sleep(0.2)
                continue
            offer = socket.inet_ntoa(data[16:20])
            break
        print(offer)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
