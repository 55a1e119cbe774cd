"""The real Kea server, run on the rendered OOB config, offers each port its planned address and nothing to others.

A relay is simulated in a private network namespace: DHCPDISCOVERs with giaddr in the OOB plane and option 82
(circuit-id = access port, remote-id = management switch) go to Kea on 127.0.0.1; the offer's yiaddr is checked.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render.kea import KEA_FILE, render_kea
from tests.conftest import ROOT

RELAY = "10.103.0.2"  # the relay's address inside the oob plane (below the 16 reserved addresses)


def _discover(xid: int, switch: str, port: str) -> bytes:
    """A relayed DHCPDISCOVER (RFC 2131 header, RFC 3046 option 82 with circuit-id 1 and remote-id 2)."""
    mac = bytes([2, 0, 0, 0, 0, xid])
    header = struct.pack(
        "!BBBBIHH4s4s4s4s16s64s128s",
        1,
        1,
        6,
        1,
        xid,
        0,
        0,
        bytes(4),
        bytes(4),
        bytes(4),
        socket.inet_aton(RELAY),
        mac + bytes(10),
        bytes(64),
        bytes(128),
    )
    agent = bytes([1, len(port)]) + port.encode() + bytes([2, len(switch)]) + switch.encode()
    return header + b"\x63\x82\x53\x63" + bytes([53, 1, 1, 82, len(agent)]) + agent + b"\xff"


@pytest.fixture
def netns() -> Iterator[str]:
    assert os.geteuid() == 0, "the Kea run needs a network namespace (root); run ./dev test as root"
    name = f"gpufabric-kea-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        subprocess.run(["ip", "-n", name, "addr", "add", f"{RELAY}/16", "dev", "lo"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def _offers(netns: str, tmp_path: Path, asks: list[tuple[str, str]]) -> list[str | None]:
    conf = json.loads(render_kea(plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml")))[KEA_FILE])
    conf["Dhcp4"]["interfaces-config"] = {"interfaces": ["lo/127.0.0.1"], "dhcp-socket-type": "udp"}  # leave RELAY:67 to us
    conf["Dhcp4"]["lease-database"]["name"] = str(tmp_path / "leases.csv")
    (tmp_path / "kea.json").write_text(json.dumps(conf), encoding="utf-8")
    kea = shutil.which("kea-dhcp4") or "/usr/sbin/kea-dhcp4"
    env = {**os.environ, "KEA_PIDFILE_DIR": str(tmp_path), "KEA_LOCKFILE_DIR": str(tmp_path)}
    client = Path(__file__).with_name("kea_relay.py")
    with (tmp_path / "kea.log").open("w") as log:
        server = subprocess.Popen(
            ["ip", "netns", "exec", netns, kea, "-c", str(tmp_path / "kea.json")], stdout=log, stderr=subprocess.STDOUT, env=env
        )
        try:
            packets = [_discover(i + 1, s, p).hex() for i, (s, p) in enumerate(asks)]
            run = subprocess.run(
                ["ip", "netns", "exec", netns, sys.executable, str(client), RELAY, *packets], capture_output=True, text=True, timeout=60, check=True
            )
        finally:
            server.terminate()
            server.wait(timeout=10)
    return [None if line == "-" else line for line in run.stdout.split()]


def test_kea_offers_the_planned_address_per_port(netns: str, tmp_path: Path) -> None:
    asks = [("oob-su1", "swp5"), ("oob-su2", "swp33"), ("oob-mgmt", "swp13"), ("oob-su9", "swp1"), ("oob-su1", "swp45")]
    # gpu005's BMC (oob[16 + 5 - 1]), leaf-su02-r1's management port, mgmt01's BMC; an unknown switch and an unused port get nothing.
    assert _offers(netns, tmp_path, asks) == ["10.103.0.20", "10.103.252.137", "10.103.7.224", None, None]
