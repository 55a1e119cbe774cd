"""Parse switch configs back into what the lossless contract cares about, whoever wrote them.

One ``SwitchQos`` per device, whatever the NOS: DSCP → traffic class, trust, PFC priorities, ECN per traffic class,
strict traffic classes, and per port MTU, PFC and watchdog. A value the config does not set stays absent (None / empty),
so the rules report it as missing rather than guessing a vendor default.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from hier_config import Platform, get_hconfig
from hier_config.child import HConfigChild
from hier_config.root import HConfig


@dataclass(frozen=True, slots=True)
class Ecn:
    """ECN marking on one traffic class, in bytes and percent."""

    min_bytes: int
    max_bytes: int
    probability: int


@dataclass(slots=True)
class PortQos:
    """What one port does."""

    mtu: int | None = None
    pfc: bool = False
    watchdog: bool = False
    cable_m: int | None = None  # the cable length the switch sizes this port's PFC headroom for (Cumulus, SONiC)


@dataclass(slots=True)
class SwitchQos:
    """What one switch does, as parsed from its config."""

    device: str
    nos: str
    trust_dscp: bool = False
    dscp_to_tc: dict[int, int] = field(default_factory=dict[int, int])
    pfc_priorities: set[int] = field(default_factory=set[int])
    ecn: dict[int, Ecn] = field(default_factory=dict[int, Ecn])
    strict_tcs: set[int] = field(default_factory=set[int])
    ports: dict[str, PortQos] = field(default_factory=dict[str, PortQos])
    qos_modelled: bool = True
    dscp_to_priority: dict[int, int] = field(default_factory=dict[int, int])
    """The switch priority a DSCP lands on, where the config says (EOS: ``qos map traffic-class T to cos P`` after the
    DSCP's TC; Cumulus: the ``switch-priority``; SONiC: the TC, which the identity TC_TO_PRIORITY_GROUP and
    MAP_PFC_PRIORITY_TO_QUEUE maps make the priority it pauses and schedules by); absent where it does not say."""


_ECN_EOS = re.compile(r"random-detect ecn minimum-threshold (\d+) kbytes maximum-threshold (\d+) kbytes max-mark-probability (\d+)")
_ECN_NXOS = re.compile(r"random-detect minimum-threshold (\d+) kbytes maximum-threshold (\d+) kbytes drop-probability (\d+) .*\becn\b")
KB = 1000


def _texts(node: HConfig | HConfigChild) -> list[str]:
    return [c.text for c in node.children]


def parse_eos(device: str, text: str) -> SwitchQos:
    """EOS: global ``qos map`` lines, ``qos profile`` blocks applied with ``service-profile``, interface MTUs."""
    config = get_hconfig(Platform.ARISTA_EOS, text)
    qos = SwitchQos(device, "eos")
    profiles: dict[str, PortQos] = {}
    tc_to_cos: dict[int, int] = {}
    for node in config.children:
        if m := re.fullmatch(r"qos map dscp ([\d ]+) to traffic-class (\d+)", node.text):
            qos.dscp_to_tc.update(dict.fromkeys(map(int, m.group(1).split()), int(m.group(2))))
        elif m := re.fullmatch(r"qos map traffic-class ([\d ]+) to cos (\d)", node.text):
            tc_to_cos.update(dict.fromkeys(map(int, m.group(1).split()), int(m.group(2))))
        elif node.text.startswith("qos profile "):
            profiles[node.text.removeprefix("qos profile ")] = _eos_profile(node, qos)
    for node in config.children:
        if node.text.startswith("interface Ethernet"):
            port = PortQos()
            for line in _texts(node):
                if line.startswith("mtu "):
                    port.mtu = int(line.split()[1])
                elif line.startswith("service-profile ") and (profile := profiles.get(line.split()[1])):
                    port.pfc, port.watchdog = profile.pfc, profile.watchdog
            qos.ports[node.text.removeprefix("interface ")] = port
    qos.dscp_to_priority = {d: tc_to_cos[tc] for d, tc in qos.dscp_to_tc.items() if tc in tc_to_cos}
    return qos


def _eos_profile(node: HConfigChild, qos: SwitchQos) -> PortQos:
    profile = PortQos()
    for child in node.children:
        text = child.text
        if text == "qos trust dscp":
            qos.trust_dscp = True
        elif text == "priority-flow-control on":
            profile.pfc = True
        elif m := re.fullmatch(r"priority-flow-control priority (\d) no-drop", text):
            qos.pfc_priorities.add(int(m.group(1)))
        elif text == "priority-flow-control pause watchdog":
            profile.watchdog = True
        elif m := re.fullmatch(r"uc-tx-queue (\d)", text):
            tc = int(m.group(1))
            for line in _texts(child):
                if e := _ECN_EOS.match(line):
                    qos.ecn[tc] = Ecn(int(e.group(1)) * KB, int(e.group(2)) * KB, int(e.group(3)))
                elif line == "priority strict":
                    qos.strict_tcs.add(tc)
    return profile


def parse_nxos(device: str, text: str) -> SwitchQos:
    """NX-OS: class-maps and the qos / network-qos / queuing policies, interface PFC, watchdog and MTU."""
    config = get_hconfig(Platform.CISCO_NXOS, text)
    qos = SwitchQos(device, "nxos", trust_dscp=True)  # NX-OS classifies by the qos policy's match dscp
    classes: dict[str, list[int]] = {}
    for node in config.children:
        if m := re.fullmatch(r"class-map type qos match-\w+ (\S+)", node.text):
            classes[m.group(1)] = [int(d) for line in _texts(node) if line.startswith("match dscp ") for d in line.split()[2].split(",")]
    for node in config.children:
        if node.text.startswith("policy-map type qos "):
            for cls in node.children:
                group = next((int(line.split()[-1]) for line in _texts(cls) if line.startswith("set qos-group ")), None)
                if group is not None:
                    qos.dscp_to_tc.update(dict.fromkeys(classes.get(cls.text.split()[-1], []), group))
        elif node.text.startswith("policy-map type network-qos "):
            qos.pfc_priorities |= {int(line.split()[-1]) for cls in node.children for line in _texts(cls) if line.startswith("pause pfc-cos ")}
        elif node.text.startswith("policy-map type queuing "):
            _nxos_queuing(node, qos)
        elif node.text.startswith("interface Ethernet"):
            lines = _texts(node)
            mtu = next((int(line.split()[1]) for line in lines if line.startswith("mtu ")), None)
            qos.ports[node.text.removeprefix("interface ")] = PortQos(
                mtu, "priority-flow-control mode on" in lines, "priority-flow-control watch-dog-interval on" in lines
            )
    return qos


def _nxos_queuing(node: HConfigChild, qos: SwitchQos) -> None:
    for cls in node.children:
        m = re.fullmatch(r"class type queuing c-out-8q-q(\d)", cls.text)
        if m is None:
            continue
        tc = int(m.group(1))
        for line in _texts(cls):
            if e := _ECN_NXOS.match(line):
                qos.ecn[tc] = Ecn(int(e.group(1)) * KB, int(e.group(2)) * KB, int(e.group(3)))
            elif line.startswith("priority level"):
                qos.strict_tcs.add(tc)


def parse_sonic(device: str, text: str) -> SwitchQos:
    """SONiC config_db: the DSCP map bound in PORT_QOS_MAP, pfc_enable, PFC_WD, WRED and schedulers on QUEUE, PORT MTU."""
    db = _config_db(text)
    qos = SwitchQos(device, "sonic")
    port_maps = db.get("PORT_QOS_MAP", {})
    bound = {m.get("dscp_to_tc_map") for m in port_maps.values()} - {None}
    for name in sorted(bound):
        qos.trust_dscp = True
        qos.dscp_to_tc.update({int(d): int(tc) for d, tc in db.get("DSCP_TO_TC_MAP", {}).get(name, {}).items()})
    watchdog = db.get("PFC_WD", {})
    for name, port in db.get("PORT", {}).items():
        pfc = {int(p) for p in port_maps.get(name, {}).get("pfc_enable", "").split(",") if p}
        qos.pfc_priorities |= pfc
        qos.ports[name] = PortQos(int(port["mtu"]) if "mtu" in port else None, bool(pfc), name in watchdog)
    wred, schedulers = db.get("WRED_PROFILE", {}), db.get("SCHEDULER", {})
    for key, queue in db.get("QUEUE", {}).items():
        tc = int(key.split("|")[1])
        if (profile := wred.get(queue.get("wred_profile"))) and profile.get("ecn") == "ecn_all":
            qos.ecn[tc] = Ecn(int(profile["green_min_threshold"]), int(profile["green_max_threshold"]), int(profile["green_drop_probability"]))
        if schedulers.get(queue.get("scheduler"), {}).get("type") == "STRICT":
            qos.strict_tcs.add(tc)
    for name, length in db.get("CABLE_LENGTH", {}).get("AZURE", {}).items():  # "40m", as fabric/render/nos/sonic/qos.py writes it
        if name in qos.ports and (m := re.fullmatch(r"(\d+)m", str(length))):
            qos.ports[name].cable_m = int(m.group(1))
    qos.dscp_to_priority = dict(qos.dscp_to_tc)
    return qos


def _config_db(text: str) -> dict[str, Any]:  # the parser reads fields as SONiC writes them: strings
    """config_db.json as SONiC keeps it: an object of tables, each an object of entries, each an object of fields.

    Raises:
        ValueError: the text is not JSON (``json.JSONDecodeError`` is a ValueError) or not shaped like that.
    """
    try:
        db: object = json.loads(text)
    except RecursionError:
        msg = "config_db.json nests deeper than JSON parsing allows; it is not a config_db"
        raise ValueError(msg) from None
    if not isinstance(db, dict):
        msg = f"config_db.json holds a JSON {type(db).__name__}, not an object of tables"
        raise ValueError(msg)
    for table, entries in cast("dict[str, object]", db).items():
        if not isinstance(entries, dict) or not all(isinstance(e, dict) for e in cast("dict[str, object]", entries).values()):
            msg = f"config_db.json table {table!r} is not an object of entries that are objects"
            raise ValueError(msg)
    return cast("dict[str, Any]", db)


_NVUE_ECN_KEYS = {"min-threshold": "min", "max-threshold": "max", "probability": "p"}


def parse_nvue(device: str, text: str) -> SwitchQos:
    """Cumulus NVUE ``nv set`` commands: mapping, egress-queue mapping, PFC, congestion control, scheduler, interfaces."""
    qos = SwitchQos(device, "cumulus")
    cable = re.search(r"^nv set qos pfc default-global cable-length (\d+)$", text, re.MULTILINE)
    cable_m = int(cable.group(1)) if cable else None
    dscp_to_sp: dict[int, int] = {}
    sp_to_tc: dict[int, int] = {}
    ecn: dict[int, dict[str, int]] = {}
    for line in text.splitlines():
        words = line.split()
        if words[:2] != ["nv", "set"]:
            continue
        rest = " ".join(words[2:])
        if rest in ("qos mapping default-global trust l3", "qos mapping default-global trust both"):
            qos.trust_dscp = True  # NVUE trust values l2 / l3 / port / both; l3 and both classify by DSCP
        elif m := re.fullmatch(r"qos mapping default-global dscp (\d+) switch-priority (\d)", rest):
            dscp_to_sp[int(m.group(1))] = int(m.group(2))
        elif m := re.fullmatch(r"qos egress-queue-mapping default-global switch-priority (\d) traffic-class (\d)", rest):
            sp_to_tc[int(m.group(1))] = int(m.group(2))
        elif m := re.fullmatch(r"qos pfc default-global switch-priority (\d)", rest):
            qos.pfc_priorities.add(int(m.group(1)))
        elif m := re.fullmatch(r"qos congestion-control default-global traffic-class (\d) (min-threshold|max-threshold|probability) (\d+)", rest):
            ecn.setdefault(int(m.group(1)), {})[_NVUE_ECN_KEYS[m.group(2)]] = int(m.group(3))
        elif m := re.fullmatch(r"qos congestion-control default-global traffic-class (\d) ecn enable", rest):
            ecn.setdefault(int(m.group(1)), {})["on"] = 1
        elif m := re.fullmatch(r"qos egress-scheduler default-global traffic-class (\d) mode strict", rest):
            qos.strict_tcs.add(int(m.group(1)))
        elif m := re.fullmatch(r"interface (swp\S+) link mtu (\d+)", rest):
            qos.ports.setdefault(m.group(1), PortQos()).mtu = int(m.group(2))
        elif m := re.fullmatch(r"interface (swp\S+) qos pfc-watchdog", rest):
            qos.ports.setdefault(m.group(1), PortQos()).watchdog = True
    qos.dscp_to_tc = {d: sp_to_tc.get(sp, sp) for d, sp in dscp_to_sp.items()}
    qos.dscp_to_priority = dict(dscp_to_sp)
    qos.ecn = {tc: Ecn(v["min"], v["max"], v["p"]) for tc, v in ecn.items() if {"on", "min", "max", "p"} <= v.keys()}
    for port in qos.ports.values():
        port.pfc = bool(qos.pfc_priorities)  # NVUE's PFC is global (default-global profile on every port)
        port.cable_m = cable_m  # so is its cable length
    return qos


def parse_frr(device: str, text: str) -> SwitchQos:
    """FRR has no QoS: only routing. The lab's links carry their MTU from the twin, not from frr.conf."""
    del text
    return SwitchQos(device, "frr", qos_modelled=False)


PARSERS = {"eos": parse_eos, "nxos": parse_nxos, "sonic": parse_sonic, "cumulus": parse_nvue, "frr": parse_frr}
CONFIG_FILE = {
    "eos": "startup-config",
    "nxos": "running-config",
    "sonic": "config_db.json",
    "cumulus": "nvue.sh",
    "frr": "frr.conf",
    "mlnx-os": "running-config",  # no QoS contract (InfiniBand); checked against its command forms only
}
