"""Community SONiC: ``config_db.json`` and the one ``frr.conf`` that ``split-unified`` mode runs.

The port layout comes from the switch model's SONiC SKU (``fabric/catalog/data/switches``): every port the SKU has
is in ``PORT`` with its lanes, alias, index, speed and subport, as SONiC itself builds them from the platform's
``platform.json`` and the SKU's ``hwsku.json`` (``src/sonic-config-engine/portconfig.py``, ``BreakoutCfg``); cabled
ports are up with the fabric MTU, the rest admin down at SONiC's default MTU. ``BREAKOUT_CFG`` names each cage's breakout mode,
``DEVICE_METADATA`` the real ``hwsku`` and ``platform``. QoS and buffers are in ``fabric.render.nos.sonic.qos``.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any, cast

from fabric.catalog.fec import rs_fec_clause
from fabric.catalog.switches import SWITCH_MODELS, SonicPort, SonicSku
from fabric.errors import RenderError
from fabric.model.strings import is_safe_text
from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.load_balancing import sonic_switch_hash
from fabric.render._json import dumps_sorted
from fabric.render.guards import all_words
from fabric.render.nos.frr import render_frr_conf
from fabric.render.nos.sonic.guard import guard_config_db
from fabric.render.nos.sonic.port_text import RowText, port_part, row_texts
from fabric.render.nos.sonic.qos import cable_length, port_tables, qos_inputs
from fabric.render.nos.sonic.text import Tables, config_db_text, encode
from fabric.render.nos.sonic.vrfs import vrf_tables

# sonic-buildimage dockers/docker-fpm-frr/docker_init.sh @086b03bd: "split" removes /etc/frr/frr.conf and runs
# per-daemon files; "split-unified" writes "service integrated-vtysh-config" and runs the one frr.conf.
ROUTING_CONFIG_MODE = "split-unified"


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


_Layout = tuple[tuple[tuple[str, dict[str, str], dict[str, str]], ...], dict[str, dict[str, str]]]
"""Each SKU port's name, its ``PORT`` fields when cabled (less MTU and description) and its whole entry when not;
and ``BREAKOUT_CFG``. Entries are shared by every switch of the SKU: no code changes them once built."""


def sku_ports(facts: SwitchFacts, sku: SonicSku, speed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``PORT`` (every port of the SKU) and ``BREAKOUT_CFG`` (every cage, keyed by its first port as platform.json does),
    with ``set_rs_fec`` applied. A down port's entry and an up port's fields but MTU and description (RS-FEC included:
    it depends only on the port's speed and lanes) are built once per SKU port (``_sku_layout``) and shared: only a
    cabled port's entry is the switch's own (the storage render changes those, never a shared one).

    Raises:
        RenderError: a cabled port is not in the SKU.
    """
    model = SWITCH_MODELS[facts.switch.model]
    assert model.sonic is not None
    mtu = model.sonic.default_mtu
    if speed:
        rows, breakout = _sku_layout(model.name, speed, sku.fec, sku.speed_gbps, mtu)
    else:
        rows, breakout = _layout(_rows(_mixed_ports(facts, sku), sku.fec, sku.speed_gbps), mtu)
    cabled = {p.name: p for p in facts.ports}
    port: dict[str, Any] = {}
    for name, up, down in rows:
        p = cabled.get(name)
        port[name] = down if p is None else {**up, "mtu": str(p.mtu), "description": p.description}
    if not cabled.keys() <= port.keys():
        unknown = sorted(cabled.keys() - port.keys())
        msg = f"{facts.switch.name}: ports {unknown} are not in SONiC SKU {sku.hwsku}"
        raise RenderError(msg)
    return port, breakout


@cache
def _sku_layout(model: str, speed: int, fec: str | None, fec_speed: int, default_mtu: int) -> _Layout:
    """``_layout`` of the SKU's ports, once per model and speed."""
    return _layout(_sku_rows(model, speed, fec, fec_speed), default_mtu)


@cache
def _sku_texts(model: str, speed: int, fec: str | None, fec_speed: int, default_mtu: int) -> tuple[tuple[RowText, ...] | None, Tables]:
    """The SKU's ``PORT`` pieces (``port_text.row_texts``) and its ``BREAKOUT_CFG`` encoded, once per model and speed."""
    rows, breakout = _sku_layout(model, speed, fec, fec_speed, default_mtu)
    return row_texts(rows), encode({"BREAKOUT_CFG": breakout})


def _layout(rows: tuple[_Row, ...], default_mtu: int) -> _Layout:
    """Each row's up fields (with ``"fec": "rs"`` where ``set_rs_fec`` would set it) and down entry; ``BREAKOUT_CFG``;
    all guarded (``guard_config_db``), so a switch's render checks only what it adds to them (``_own_tables``).

    Raises:
        RenderError: a port name, alias or breakout entry that is not safe in config_db (catalog data).
    """
    down = {"admin_status": "down", "mtu": str(default_mtu)}
    layout: list[tuple[str, dict[str, str], dict[str, str]]] = []
    breakout: dict[str, tuple[str, str]] = {}
    for name, fixed, cage in rows:
        up = {**fixed, "admin_status": "up"}
        if _needs_rs(up["speed"], str(up["lanes"])):
            up["fec"] = "rs"
        layout.append((name, up, {**fixed, **down}))
        breakout.setdefault(cage[0], cage[1:])
    cfg = {name: {"brkout_mode": mode} for name, mode in breakout.values()}
    guard_config_db({"PORT": {name: up for name, up, _ in layout}})
    guard_config_db({"PORT": {name: down for name, _, down in layout}, "BREAKOUT_CFG": cfg})
    return tuple(layout), cfg


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


def _tables(facts: SwitchFacts, sku: SonicSku, speed: int, *, ports: bool = True) -> tuple[dict[str, Any], Tables]:
    """The switch's own config_db tables, guarded (``_own_tables``; without ``PORT`` and ``BREAKOUT_CFG`` unless
    ``ports``), and the QoS and buffer tables it shares with every switch of the same RoCE contract, lossless ports, SKU
    and release (``qos.port_tables``: built, guarded and encoded once)."""
    own = _own_tables(facts, sku, speed, ports=ports)
    if facts.roce is None:
        return own, _NO_TABLES
    lossless = tuple(p.name for p in facts.ports if p.lossless)
    return own, port_tables(qos_inputs(facts.roce, sku.buffers, facts.switch.nos_version), lossless)


def _own_tables(facts: SwitchFacts, sku: SonicSku, speed: int, *, ports: bool) -> dict[str, Any]:
    """The tables of this switch alone, as ``guard_config_db`` passes them: the per-port tables (``PORT``,
    ``BREAKOUT_CFG``, ``INTERFACE``, some 450 entries) are checked through their inputs, the rest by the guard.

    Why checking the inputs is no looser than the guard on those three tables (each of its checks is met):

    - ``BREAKOUT_CFG``, the ``PORT`` keys, a down port's entry and an up port's fields but MTU and description come
      from the SKU layout, which ``_layout`` put through the guard;
    - an up port adds ``mtu``, a string, and ``description``, a text field: every description must be one line
      (``is_safe_text`` over them all joined: a character is unsafe alone, so the whole is safe exactly when each is;
      without ``ports``, ``PORT`` is the caller's, written by ``port_text.port_part``, which checks them so);
    - an ``INTERFACE`` key is a cabled port's name (``sku_ports`` refuses one not in the SKU, so a checked ``PORT`` key)
      or that name, ``|`` and the port's address: every address must be one SONiC word (``all_words``), which holds no
      ``|``, so the key has exactly those two parts; the entries are two constant objects without checked fields.

    Where an input fails, or a shared spine adds its VRFs (``vrf_tables`` rewrites ``INTERFACE``), every table goes
    through the guard, which names what it refuses.
    """
    s, m = facts.switch, facts.management
    model = SWITCH_MODELS[s.model]
    assert model.sonic is not None
    interface: dict[str, Any] = {}
    numbered: dict[str, str] = {}  # one entry object per kind, shared by the ports (as the QoS tables share theirs)
    unnumbered = {"ipv6_use_link_local_only": "enable"}
    for p in facts.ports:
        if p.address:
            interface[p.name] = numbered
            interface[f"{p.name}|{p.address}"] = numbered
        else:
            interface[p.name] = unnumbered
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
        "SWITCH_HASH": sonic_switch_hash(facts.load_balancing),  # fabric.plan.load_balancing: the generic hash
    }
    if facts.roce is not None:
        db["CABLE_LENGTH"] = cable_length(facts)
    per_port: dict[str, Any] = {"INTERFACE": interface}
    if ports:
        per_port["PORT"], per_port["BREAKOUT_CFG"] = sku_ports(facts, sku, speed)
    vrfs = vrf_tables(facts, interface)  # a shared spine: a VRF per plane (fabric.render.nos.sonic.vrfs)
    addresses = [p.address for p in facts.ports if p.address]
    described = not ports or is_safe_text("".join(p.description for p in facts.ports))  # else port_part checked them
    if vrfs or not (described and all_words("sonic", addresses)):
        return guard_config_db({k: v for k, v in (db | per_port | vrfs).items() if v})
    return guard_config_db({k: v for k, v in db.items() if v}) | {k: v for k, v in per_port.items() if v}


_NO_TABLES = Tables({}, ())


def build_config_db(facts: SwitchFacts) -> dict[str, Any]:
    """The config_db tables of one switch, keys sorted on output."""
    own, shared = _tables(facts, *_sku(facts))
    return {**own, **shared.tables}


def render_sonic(facts: SwitchFacts) -> dict[str, str]:
    """``config_db.json`` and the ``frr.conf`` that split-unified mode loads (management lives in config_db).

    ``PORT`` is written from the SKU's pieces (``port_text``) where they give the encoder's text, and ``BREAKOUT_CFG``
    is the SKU's, encoded once; otherwise both are built as dicts (``sku_ports``), which also refuses a port the SKU lacks.
    """
    sku, speed = _sku(facts)
    model = SWITCH_MODELS[facts.switch.model]
    assert model.sonic is not None
    rows, breakout = _sku_texts(model.name, speed, sku.fec, sku.speed_gbps, model.sonic.default_mtu) if speed else (None, _NO_TABLES)
    part = port_part(facts.ports, rows) if rows is not None else None
    own, shared = _tables(facts, sku, speed, ports=part is None)
    groups = (encode(own), shared) if part is None else (encode(own), shared, breakout, Tables({}, (("PORT", part),)))
    fallback = any(g.parts is None for g in groups)  # what dumps_sorted writes with the standard encoder
    text = dumps_sorted(build_config_db(facts)) if fallback else config_db_text(*groups)
    return {"config_db.json": text, "frr.conf": render_frr_conf(facts, management=False, sonic=True)}
