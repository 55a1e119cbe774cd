"""Community SONiC: ``config_db.json`` and the one ``frr.conf`` that ``split-unified`` mode runs.

The port layout comes from the switch model's SONiC SKU (``fabric/catalog/data/switches``): every port the SKU has
is in ``PORT`` with its lanes, alias, index, speed and subport, as SONiC itself builds them from the platform's
``platform.json`` and the SKU's ``hwsku.json`` (``src/sonic-config-engine/portconfig.py``, ``BreakoutCfg``); cabled
ports are up with the fabric MTU, the rest admin down at SONiC's default MTU. ``BREAKOUT_CFG`` names each cage's breakout mode,
``DEVICE_METADATA`` the real ``hwsku`` and ``platform``. QoS and buffers are in ``fabric.render.nos.sonic.qos``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache
from itertools import chain, compress
from operator import is_not
from typing import Any, cast

from fabric.catalog.fec import rs_fec_clause
from fabric.catalog.switches import SWITCH_MODELS, SonicPort, SonicSku
from fabric.errors import RenderError
from fabric.model.strings import is_safe_text
from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.load_balancing import sonic_switch_hash
from fabric.render._json import dumps_sorted
from fabric.render.guards import TOKEN_RE, one_line, token
from fabric.render.nos.frr import render_frr_conf
from fabric.render.nos.sonic.qos import qos_tables
from fabric.render.nos.sonic.vrfs import vrf_tables

# sonic-buildimage dockers/docker-fpm-frr/docker_init.sh @086b03bd: "split" removes /etc/frr/frr.conf and runs
# per-daemon files; "split-unified" writes "service integrated-vtysh-config" and runs the one frr.conf.
ROUTING_CONFIG_MODE = "split-unified"

# config_db fields whose value is a name or an address from the definition: one SONiC word each (``_guard``).
NAME_FIELDS = frozenset({"hostname", "gwaddr", "SRC_IP", "alias"})
# config_db fields of free text: one printable line (JSON escapes quotes, so only control characters matter).
TEXT_FIELDS = frozenset({"description", "policy_desc"})
_CHECKED_FIELDS = NAME_FIELDS | TEXT_FIELDS
_FIELD_TYPES = frozenset({str, list})
_WORD = TOKEN_RE["sonic"].pattern.removeprefix("^").removesuffix("$")
_WORDS_JOINED = re.compile(rf"(?:{_WORD})(?:\|(?:{_WORD}))*")
"""Words of ``TOKEN_RE["sonic"]`` joined by ``|``, which no word holds: the whole of a joined text matches exactly when
each part matches the whole of ``TOKEN_RE["sonic"]`` (one regex over a table's keys instead of a call per part)."""


def _sku(facts: SwitchFacts) -> tuple[SonicSku, int]:
    """The SKU for the speed of the switch's ports, and that speed; with ports at several speeds, the platform's default
    SKU (the native speed's) and 0: each cage then runs its own platform.json mode (dynamic port breakout)."""
    model = SWITCH_MODELS[facts.switch.model]
    speeds = sorted({p.speed_gbps for p in facts.ports}) or [model.speed_gbps]
    sonic = model.sonic
    if len(speeds) > 1 and sonic and all(sonic.dynamic_mode(model.fanout(s) or 0) for s in speeds) and sonic.sku(model.speed_gbps):
        return cast("SonicSku", sonic.sku(model.speed_gbps)), 0
    sku = model.sonic.sku(speeds[0]) if model.sonic else None
    if len(speeds) > 1 or sku is None:
        known = [s.speed_gbps for s in model.sonic.skus] if model.sonic else []
        msg = f"{facts.switch.name}: SONiC on {model.name} has SKUs for {known} Gb/s ports, not for {speeds} Gb/s; choose a listed speed"
        raise RenderError(msg)
    return sku, speeds[0]


@cache
def _sonic_ports(model: str, speed: int) -> tuple[SonicPort, ...]:
    """The SKU's ports, built once per model and speed (every switch of a tier has the same; they are frozen)."""
    return SWITCH_MODELS[model].sonic_ports(speed)


def _mixed_ports(facts: SwitchFacts, sku: SonicSku) -> tuple[SonicPort, ...]:
    """Every port when cages run different modes: a cabled cage in the platform.json mode of its ports' speed, the
    rest in the default SKU's mode (sonic-buildimage doc/dynamic-port-breakout: BREAKOUT_CFG per cage, PORT per mode).

    Raises:
        RenderError: one cage's cabled ports run different speeds.
    """
    model = SWITCH_MODELS[facts.switch.model]
    assert model.sonic is not None
    stride = model.sonic.name_stride
    speed_of: dict[int, int] = {}
    for p in facts.ports:
        number = int(p.name.removeprefix("Ethernet"))
        cage = number // stride
        if cage < model.cages and speed_of.setdefault(cage, p.speed_gbps) != p.speed_gbps:
            msg = f"{facts.switch.name}: cage {cage + 1} has ports at {speed_of[cage]} and {p.speed_gbps} Gb/s; a cage runs one breakout mode"
            raise RenderError(msg)
    ports: list[SonicPort] = []
    for cage in range(model.cages):
        speed = speed_of.get(cage, model.speed_gbps)
        mode = model.sonic.dynamic_mode(model.fanout(speed) or 0) or sku.breakout_mode
        ports.extend(model.sonic_cage_ports(cage, speed, mode))
    return (*ports, *sku.other_ports)


def _ports(facts: SwitchFacts, sku: SonicSku, speed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """PORT (every port of the SKU) and BREAKOUT_CFG (every cage, keyed by its first port as platform.json does)."""
    model = SWITCH_MODELS[facts.switch.model]
    assert model.sonic is not None
    cabled = {p.name: p for p in facts.ports}
    rows = _sku_rows(model.name, speed, sku.fec, sku.speed_gbps) if speed else _rows(_mixed_ports(facts, sku), sku.fec, sku.speed_gbps)
    port: dict[str, Any] = {}
    breakout: dict[str, Any] = {}
    down = {"admin_status": "down", "mtu": str(model.sonic.default_mtu)}
    for name, fixed, cage in rows:
        if (p := cabled.get(name)) is not None:
            port[name] = {**fixed, "admin_status": "up", "mtu": str(p.mtu), "description": p.description}
        else:
            port[name] = {**fixed, **down}
        breakout.setdefault(cage[0], cage[1:])
    unknown = sorted(cabled.keys() - port.keys())
    if unknown:
        msg = f"{facts.switch.name}: ports {unknown} are not in SONiC SKU {sku.hwsku}"
        raise RenderError(msg)
    return port, {name: {"brkout_mode": mode} for name, mode in breakout.values()}


_Row = tuple[str, dict[str, str], tuple[str, str, str]]
"""A SKU port's name, its fixed PORT fields (copied, never changed) and its cage's BREAKOUT_CFG key and entry."""


@cache
def _sku_rows(model: str, speed: int, fec: str | None, fec_speed: int) -> tuple[_Row, ...]:
    """``_rows`` of the SKU's ports, once per model and speed (every switch of a tier has the same)."""
    return _rows(_sonic_ports(model, speed), fec, speed or fec_speed)


def _rows(ports: Iterable[SonicPort], fec: str | None, fec_speed: int) -> tuple[_Row, ...]:
    """Each port's fixed PORT fields: alias, index, lanes, speed (Mb/s), subport, and the SKU's FEC at its speed."""
    rows: list[_Row] = []
    for p in ports:
        fixed = {"alias": p.alias, "index": str(p.index), "lanes": p.lanes, "speed": str(p.speed_gbps * 1000), "subport": str(p.subport)}
        if fec and p.speed_gbps == fec_speed:
            fixed["fec"] = fec
        rows.append((p.name, fixed, (str(p.index), p.name, p.breakout_mode)))
    return tuple(rows)


def set_rs_fec(port: dict[str, Any]) -> None:
    """``"fec": "rs"`` on every up ``PORT`` whose speed over its lanes needs RS-FEC (``fabric.catalog.fec``), so the
    platform default does not decide. SONiC ``doc/Configuration.md`` "Port": ``"fec": "rs"``; sonic-buildimage
    ``src/sonic-yang-models/yang-models/sonic-port.yang`` leaf ``fec`` (rs, fc, none, auto; 202305 to 202411).

    Example:
        >>> port = {"Ethernet0": {"admin_status": "up", "speed": "400000", "lanes": "0,1,2,3"}}
        >>> set_rs_fec(port); port["Ethernet0"]["fec"]
        'rs'
    """
    for entry in port.values():
        if entry.get("admin_status") == "up" and _needs_rs(entry["speed"], str(entry["lanes"])):
            entry["fec"] = "rs"


@cache
def _needs_rs(speed: str, lanes: str) -> bool:
    """Whether a port of ``speed`` Mb/s over ``lanes`` (``"0,1,2,3"``) needs RS-FEC: once per speed and lane list."""
    return rs_fec_clause(int(speed) // 1000, len(lanes.split(","))) is not None


def build_config_db(facts: SwitchFacts) -> dict[str, Any]:
    """The config_db tables of one switch, keys sorted on output."""
    s, m = facts.switch, facts.management
    model = SWITCH_MODELS[s.model]
    assert model.sonic is not None
    sku, speed = _sku(facts)
    port, breakout = _ports(facts, sku, speed)
    set_rs_fec(port)
    interface: dict[str, Any] = {}
    numbered: dict[str, str] = {}  # one entry object per kind, shared by the ports (as the QoS tables share theirs)
    unnumbered = {"ipv6_use_link_local_only": "enable"}
    for p in facts.ports:
        interface[p.name] = numbered if p.address else unnumbered
        if p.address:
            interface[f"{p.name}|{p.address}"] = numbered
    db: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": s.name,
                "hwsku": sku.hwsku,
                "platform": model.sonic.platform,
                "type": "LeafRouter" if s.tier == "leaf" else "SpineRouter",
                "bgp_asn": str(s.asn),
                "docker_routing_config_mode": ROUTING_CONFIG_MODE,
                "buffer_model": "dynamic",
                "default_pfcwd_status": "enable" if facts.roce and facts.roce.pfc_watchdog.enabled else "disable",
            }
        },
        "PORT": port,
        "BREAKOUT_CFG": breakout,
        "INTERFACE": interface,
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{s.loopback}": {}},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
        "MGMT_PORT": {m.interface: {"admin_status": "up", "alias": m.interface, "description": "oob management"}},
        "MGMT_INTERFACE": {f"{m.interface}|{m.address}": {"gwaddr": m.gateway} if m.gateway else {}},
        "NTP_SERVER": {a: {} for a in m.ntp},
        "SYSLOG_SERVER": {a: {} for a in m.syslog},
        "DNS_NAMESERVER": {a: {} for a in m.dns},
        "ACL_TABLE": {
            "SSH_ONLY": {"type": "CTRLPLANE", "services": ["SSH"], "stage": "ingress", "policy_desc": "SSH only from the management prefix"}
        },
        "ACL_RULE": {
            "SSH_ONLY|RULE_10": {"PRIORITY": "9999", "SRC_IP": m.allowed_prefix, "PACKET_ACTION": "ACCEPT"},
            "SSH_ONLY|DEFAULT_RULE": {"PRIORITY": "1", "ETHER_TYPE": "0x0800", "PACKET_ACTION": "DROP"},
        },
        **qos_tables(facts, sku.buffers),
        "SWITCH_HASH": sonic_switch_hash(facts.load_balancing),  # fabric.plan.load_balancing: the generic hash
    }
    db |= vrf_tables(facts, interface)  # a shared spine: a VRF per plane (fabric.render.nos.sonic.vrfs)
    return _guard({k: v for k, v in db.items() if v})


def _guard(db: dict[str, Any]) -> dict[str, Any]:
    """``db`` once every key part and every name and text field is safe where it stands (defence in depth).

    config_db joins a key's parts with ``|`` (``INTERFACE|Ethernet0|10.0.0.0/31``), so a part holding ``|`` or
    whitespace would name another object; a name field is one word; free text is one line. Every field is a string or
    a list of strings (redis hash fields, as ``sonic-cfggen`` writes them), which ``dumps_sorted`` relies on.

    Raises:
        RenderError: naming the table, key and field of the refused value.
    """
    if _is_plainly_safe(db):
        return db
    safe: set[str] = set()  # key parts and names already checked: a port name recurs in a dozen tables
    for table, entries in db.items():
        for key, fields in entries.items():
            try:
                parts = key.split("|")
                if not safe.issuperset(parts):
                    safe.update(token(part, "sonic") for part in parts)
                if not _FIELD_TYPES.issuperset(map(type, fields.values())):  # set operations: no Python loop per field
                    field = next(f for f, v in fields.items() if type(v) not in _FIELD_TYPES)
                    msg = f"{field}: {fields[field]!r} is not a string (config_db fields are strings)"
                    raise RenderError(msg)
                for field in sorted(_CHECKED_FIELDS.intersection(fields)):
                    _check_field(field, fields[field], safe)
            except RenderError as exc:
                msg = f"config_db.json {table}|{key}: {exc}"
                raise RenderError(msg) from exc
    return db


def _is_plainly_safe(db: dict[str, Any]) -> bool:
    """Whether ``db`` passes every check of ``_guard``, found table by table rather than entry by entry (a switch has
    some 2,000 entries); False sends ``_guard`` through its entry-by-entry loop, which names what it refuses.

    Stricter than that loop, never looser: a key part or name field must match the whole of ``TOKEN_RE["sonic"]``
    (``_WORDS_JOINED`` over the joined parts or names), a text field ``is_safe_text``, every field must be a ``str`` or a
    ``list``. Two shortcuts keep it cheap, neither looser: a key or name that matched once is remembered
    (``_SAFE_WORDS``: a port's keys recur on every switch of its SKU, so only the new ones meet the regex), and an entry
    object that a run of keys shares (the QoS builders give every port the same dict) is read once per run.
    """
    types: set[type] = set()
    values_of = cast("Callable[[dict[str, object]], Iterable[object]]", dict.values)  # pyright: ignore[reportUnknownMemberType] - the unbound method
    for table in db.values():
        entries = cast("dict[str, dict[str, object]]", table)
        if not _all_words(entries.keys()):  # every part of every key: '|' joins them
            return False
        listed = entries.values()
        # An entry object once per run of keys sharing it (C loops): never skips one, as a skipped entry is the one before.
        distinct = list(compress(listed, map(is_not, listed, chain((None,), listed))))
        types.update(map(type, chain.from_iterable(map(values_of, distinct))))
        for field in _CHECKED_FIELDS.intersection(chain.from_iterable(distinct)):
            values = [fields[field] for fields in distinct if field in fields]
            texts = [v for v in values if type(v) is str]
            if len(texts) != len(values):
                return False
            if field in TEXT_FIELDS:
                if not is_safe_text("".join(texts)):  # a character is unsafe alone: the joined text tells for all
                    return False
            elif "|" in "".join(texts) or not _all_words(texts):
                return False  # a value holding '|' would pass as two words
    return _FIELD_TYPES.issuperset(types)


_SAFE_WORDS: set[str] = set()
"""Keys and names ``_all_words`` has seen match: only matching strings enter; emptied past ``_SAFE_WORDS_MAX``."""
_SAFE_WORDS_MAX = 1 << 16


def _all_words(texts: Iterable[str]) -> bool:
    """Whether every text is one or more ``TOKEN_RE["sonic"]`` words joined by ``|`` (a config_db key; a name has no ``|``,
    which the caller checks): a set difference leaves the texts not seen before, and one regex checks those at once.

    Example:
        >>> _all_words(["Ethernet0|3", "Loopback0"]), _all_words(["Ethernet0|x y"]), _all_words(["Ethernet0|"])
        (True, False, False)
    """
    if _SAFE_WORDS.issuperset(texts):
        return True
    new = set(texts).difference(_SAFE_WORDS)
    if not _WORDS_JOINED.fullmatch("|".join(new)):
        return False
    if len(_SAFE_WORDS) + len(new) > _SAFE_WORDS_MAX:
        _SAFE_WORDS.clear()
    _SAFE_WORDS.update(new)
    return True


def _check_field(field: str, value: object, safe: set[str]) -> None:
    """A name field is one word (remembered in ``safe``), a text field one line; both are strings."""
    if not isinstance(value, str):
        msg = f"{field}: {value!r} is not a string (config_db fields are strings)"
        raise RenderError(msg)
    if field in TEXT_FIELDS:
        one_line(value)
    elif value not in safe:
        safe.add(token(value, "sonic"))


def render_sonic(facts: SwitchFacts) -> dict[str, str]:
    """``config_db.json`` and the ``frr.conf`` that split-unified mode loads (management lives in config_db)."""
    text = dumps_sorted(build_config_db(facts))
    return {"config_db.json": text, "frr.conf": render_frr_conf(facts, management=False, sonic=True)}


guard_config_db = _guard
"""The config_db guard, for the other SONiC renderers (``fabric.render.nos.sonic.oob``)."""
