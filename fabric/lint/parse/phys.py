"""Parse a switch's config back into its physical layer: per port the speed, lanes, MTU and FEC it sets, per cage the
breakout mode.

One ``PhysConfig`` per switch, whatever wrote it (NVUE ``nv set`` lines, SONiC ``config_db.json``, EOS or NX-OS CLI).
A value the config does not set stays None; the linter then takes the default the cage's breakout mode gives.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, cast

from fabric.lint.parse.l2 import cli_blocks


@dataclass(slots=True)
class PhysPort:
    """What one port's config says about its physical layer (None: not set)."""

    speed_gbps: int | None = None
    lanes: int | None = None
    mtu: int | None = None
    fec: str | None = None
    """Normalised: ``rs``, ``fc`` (BASE-R / FireCode), ``none`` or ``auto``."""


@dataclass(slots=True)
class PhysConfig:
    """The physical layer of one switch as its config sets it.

    Attributes:
        breakouts: cage -> its breakout as written: Cumulus ``(native port name, "2x")``, SONiC ``(first port,
            "2x400G[...]")``, NX-OS ``(cage number, "400g-2x")``; EOS has none (the lane-1 port's ``speed`` splits it).
    """

    device: str
    ports: dict[str, PhysPort] = field(default_factory=dict[str, PhysPort])
    breakouts: dict[str, str] = field(default_factory=dict[str, str])


_FEC = {
    "rs": "rs", "rs-fec": "rs", "reed-solomon": "rs", "baser": "fc", "fc": "fc", "fc-fec": "fc", "fire-code": "fc",
    "off": "none", "none": "none", "auto": "auto",
}  # fmt: skip


def _fec(value: str) -> str:
    return _FEC.get(value.lower(), value.lower())


def parse_nvue_phys(device: str, text: str) -> PhysConfig:
    """NVUE: ``link breakout Nx``, ``link speed NG``, ``link mtu N``, ``link fec rs|baser|off|auto``.

    Example:
        >>> c = parse_nvue_phys("s", "nv set interface swp1 link breakout 2x\\nnv set interface swp1s0 link speed 400G\\n")
        >>> c.breakouts, c.ports["swp1s0"].speed_gbps
        ({'swp1': '2x'}, 400)
    """
    config = PhysConfig(device)
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("nv set interface "):
            continue
        words = shlex.split(line)[3:]
        if len(words) < 4 or words[1] != "link":
            continue
        name, what, value = words[0], words[2], words[3]
        if what == "breakout":  # the cage's line: its native port name stops being a port of its own
            config.breakouts[name] = value
            continue
        if what not in ("speed", "mtu", "fec"):
            continue
        port = config.ports.setdefault(name, PhysPort())
        if what == "speed":
            port.speed_gbps = _gbps(value)
        elif what == "mtu":
            port.mtu = int(value)
        elif what == "fec":
            port.fec = _fec(value)
    return config


def parse_config_db_phys(device: str, text: str) -> PhysConfig:
    """SONiC: ``PORT`` speed (Mb/s), lanes, mtu, fec; ``BREAKOUT_CFG`` brkout_mode per cage (keyed by its first port).

    Example:
        >>> c = parse_config_db_phys("s", '{"PORT": {"Ethernet0": {"speed": "400000", "lanes": "0,1,2,3", "fec": "rs"}}}')
        >>> c.ports["Ethernet0"].speed_gbps, c.ports["Ethernet0"].lanes, c.ports["Ethernet0"].fec
        (400, 4, 'rs')

    Raises:
        ValueError: the text is not a JSON object.
    """
    loaded: object = json.loads(text)
    if not isinstance(loaded, dict):
        msg = "config_db.json is not a JSON object"
        raise ValueError(msg)
    db = cast("dict[str, dict[str, dict[str, Any]]]", loaded)
    config = PhysConfig(device)
    for name, fields in db.get("PORT", {}).items():
        if fields.get("admin_status", "up") != "up":
            continue  # a port the config leaves down carries no cable to check
        config.ports[name] = PhysPort(
            int(fields["speed"]) // 1000 if str(fields.get("speed", "")).isdigit() else None,
            len(str(fields["lanes"]).split(",")) if fields.get("lanes") else None,
            int(fields["mtu"]) if str(fields.get("mtu", "")).isdigit() else None,
            _fec(str(fields["fec"])) if "fec" in fields else None,
        )
    for name, fields in db.get("BREAKOUT_CFG", {}).items():
        config.breakouts[name] = str(fields.get("brkout_mode", ""))
    return config


def parse_eos_phys(device: str, text: str) -> PhysConfig:
    r"""EOS: per ``interface Ethernet…`` block ``speed 400g-4`` (speed, lanes) or ``speed 800g``, ``mtu``/``l2 mtu``,
    ``error-correction encoding reed-solomon|fire-code`` / ``no error-correction encoding``.

    Example:
        >>> c = parse_eos_phys("s", "interface Ethernet1/1\n   speed 200g-4\n   mtu 9214\n!\n")
        >>> c.ports["Ethernet1/1"].speed_gbps, c.ports["Ethernet1/1"].lanes, c.ports["Ethernet1/1"].mtu
        (200, 4, 9214)
    """
    return _cli_phys(device, text, r"Ethernet[\d/]+", _eos_line)


def _eos_line(port: PhysPort, words: list[str]) -> None:
    match words:
        case ["speed", value]:
            number, _, lanes = value.lower().partition("-")
            port.speed_gbps = _gbps(number)
            port.lanes = int(lanes) if lanes.isdigit() else None
        case ["mtu", value] | ["l2", "mtu", value]:
            port.mtu = int(value)
        case ["error-correction", "encoding", value]:
            port.fec = _fec(value)
        case ["no", "error-correction", "encoding"]:
            port.fec = "none"
        case _:
            pass


def parse_nxos_phys(device: str, text: str) -> PhysConfig:
    r"""NX-OS: ``interface breakout module 1 port N map 400g-2x``; per ``interface Ethernet…`` block ``speed`` (Mb/s),
    ``mtu``, ``fec rs-fec|fc-fec|off|auto``.

    Example:
        >>> c = parse_nxos_phys("s", "interface breakout module 1 port 3 map 100g-4x\ninterface Ethernet1/3/1\n  speed 100000\n")
        >>> c.breakouts, c.ports["Ethernet1/3/1"].speed_gbps
        ({'3': '100g-4x'}, 100)
    """
    config = _cli_phys(device, text, r"Ethernet[\d/]+", _nxos_line)
    for match in re.finditer(r"^interface breakout module \d+ port (\d+) map (\S+)$", text, re.MULTILINE):
        config.breakouts[match.group(1)] = match.group(2)
    return config


def _nxos_line(port: PhysPort, words: list[str]) -> None:
    match words:
        case ["speed", value] if value.isdigit():
            port.speed_gbps = int(value) // 1000
        case ["mtu", value]:
            port.mtu = int(value)
        case ["fec", value]:
            port.fec = _fec(value)
        case _:
            pass


def _cli_phys(device: str, text: str, name_re: str, line: Any) -> PhysConfig:  # noqa: ANN401 - the per-NOS line parser
    config = PhysConfig(device)
    for block in cli_blocks(text):
        head = block[0].split()
        if len(head) == 2 and head[0] == "interface" and re.fullmatch(name_re, head[1]):
            port = config.ports.setdefault(head[1], PhysPort())
            for words in (b.split() for b in block[1:]):
                line(port, words)
    return config


def _gbps(value: str) -> int | None:
    """``400G`` / ``400g`` / ``400`` -> 400; ``1G`` -> 1; anything else None."""
    match = re.fullmatch(r"(\d+)[gG]?", value)
    return int(match.group(1)) if match else None


PHYS_PARSERS = {"cumulus": parse_nvue_phys, "sonic": parse_config_db_phys, "eos": parse_eos_phys, "nxos": parse_nxos_phys}
