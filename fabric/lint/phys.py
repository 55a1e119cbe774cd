"""The physical-layer linter: every cable's two ends agree, every port runs a speed its cage's breakout mode allows.

It reads what the switch configs say (rendered or hand-edited, parsed back by ``fabric.lint.parse.phys``) and the
cabling list (``cabling.csv``), not the plan's intent, so an edited config is caught:

- **speed**: each switch end of a cable runs the cable's speed (``link speed``, SONiC ``PORT`` speed, EOS / NX-OS
  ``speed``; a port that sets none runs its cage mode's speed); a NIC end is at least that fast (its catalog speed);
- **MTU**: both switch ends of a switch-to-switch cable set the same MTU;
- **breakout**: a port exists in its cage's configured breakout mode, and runs a speed that mode allows (the catalog's
  SONiC breakout modes, from the platform's ``platform.json`` / ``hwsku.json``: ``2x400G[200G,100G,...]``); where the
  catalog has no such list only "not above the mode's speed" is checked and the port counts as unconfirmed;
- **FEC**: a port whose speed needs RS-FEC (the rule and its IEEE 802.3 clauses: ``fabric.catalog.fec``) does not
  turn it off or to BASE-R, and each cabled one sets it (``rs``): unset or ``auto`` leaves it to the NOS default.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache

from fabric.catalog.fec import rs_fec_clause
from fabric.catalog.switch_model import mode_speeds
from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding, InputError
from fabric.lint.parse.phys import PHYS_PARSERS, PhysConfig, PhysPort
from fabric.lint.rules import LintFinding
from fabric.plan.types import ClusterPlan

_Entry = tuple[int, int, int, tuple[int, ...] | None]
"""(cage, ports per cage in the mode, the mode's port speed, the speeds a port of the mode may run or None)."""


@dataclass(frozen=True, slots=True)
class PhysReport:
    """Findings and what was checked: switch ports (cable ends on a parsed config), cables, ports whose lower speed the
    catalog cannot confirm."""

    findings: tuple[LintFinding, ...]
    ports: int
    cables: int
    unconfirmed: int = 0


@dataclass(frozen=True, slots=True)
class _Port:
    """A switch port as configured: its cage mode (fanout, speed), the speed it runs, lanes, MTU and FEC."""

    fanout: int
    mode_gbps: int
    speed_gbps: int
    lanes: int
    mtu: int | None
    fec: str | None


def switch_inventory(plan: ClusterPlan) -> dict[str, tuple[str, str]]:
    """Every switch of the plan (compute, storage / in-band, OOB): name -> (model, NOS)."""
    found = {s.name: (s.model, s.nos) for s in (plan.fabric.switches if plan.fabric else ())}
    found |= {s.name: (s.model, s.nos) for net in plan.storage for s in net.switches}
    found |= {s.name: (s.model, s.nos) for s in (plan.oob.switches if plan.oob else ())}
    return found


def lint_phys(plan: ClusterPlan, configs: Mapping[str, str | None], cabling: str) -> PhysReport:
    """Lint the physical layer of every switch config (None: missing, skipped) against ``cabling`` (cabling.csv text).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.render import render_configs
        >>> plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
        >>> files = render_configs(plan)
        >>> configs = {n: files.get(f"switches/{n}/{PHYS_FILE[nos]}") for n, (_, nos) in switch_inventory(plan).items() if nos in PHYS_FILE}
        >>> report = lint_phys(plan, configs, files["cabling.csv"])
        >>> report.findings, report.ports > 1000, report.cables > 700
        ((), True, True)

    Raises:
        InputError: a config cannot be parsed, or the cabling list is not the CSV render writes.
    """
    inventory = switch_inventory(plan)
    observed: dict[str, dict[str, _Port | None]] = {}
    findings: list[LintFinding] = []
    unconfirmed: set[tuple[str, str]] = set()
    for name, text in configs.items():
        model, nos = inventory.get(name, ("", ""))
        if text is None or nos not in PHYS_PARSERS or model not in SWITCH_MODELS:
            continue
        try:
            parsed = PHYS_PARSERS[nos](name, text)
        except (ValueError, KeyError) as exc:
            msg = f"switch {name}: its {PHYS_FILE[nos]} cannot be parsed for its ports ({exc}); fix the file or render it again"
            raise InputError([Finding((), msg)]) from exc
        ports, problems, loose = _resolve(model, nos, parsed)
        observed[name] = ports
        findings.extend(problems)
        unconfirmed.update((name, p) for p in loose)
    nics = {(n.hostname, i.name): i.speed_gbps for n in plan.nodes for i in n.interfaces}
    ends = cables = 0
    for row in _rows(cabling):
        device, port, peer, peer_port, speed = row["device"], row["port"], row["peer_device"], row["peer_port"], int(row["speed_gbps"])
        cable = f"{device} {port} - {peer} {peer_port or '(site port)'}"
        checked = [(d, p, observed[d][p]) for d, p in ((device, port), (peer, peer_port)) if p in observed.get(d, {})]
        if not checked:
            continue
        cables += 1
        for d, p, got in checked:
            ends += 1
            if got is None:
                findings.append(
                    LintFinding(
                        d, p, f"port configured for cable {cable}", "no such port", f"cable {cable} lands on a port the config does not set up"
                    )
                )
            elif got.speed_gbps != speed:
                msg = f"cable {cable} runs {speed}G (cabling.csv) but {d} {p} is set to {got.speed_gbps}G: the link will not come up"
                findings.append(LintFinding(d, p, f"speed {speed}G", f"speed {got.speed_gbps}G", msg))
        for d, p in ((device, port), (peer, peer_port)):
            if (d, p) in nics and nics[d, p] < speed:
                msg = f"cable {cable} runs {speed}G but the NIC {d} {p} runs at most {nics[d, p]}G"
                findings.append(LintFinding(d, p, f"NIC speed >= {speed}G", f"NIC {nics[d, p]}G", msg))
        findings.extend(_mtu(cable, checked))
        findings.extend(_fec_unset(cable, checked))
    return PhysReport(tuple(findings), ends, cables, len(unconfirmed))


def _fec_unset(cable: str, checked: list[tuple[str, str, _Port | None]]) -> Iterator[LintFinding]:
    """Each switch end of the cable whose speed needs RS-FEC sets it (not unset, not ``auto``: the NOS default)."""
    for d, p, got in checked:
        clause = rs_fec_clause(got.speed_gbps, got.lanes) if got is not None else None
        if got is not None and clause is not None and got.fec in (None, "auto"):
            shown = "no fec" if got.fec is None else "fec auto"
            msg = (
                f"{d} {p} (cable {cable}) runs {got.speed_gbps}G over {got.lanes} lane(s): RS-FEC required by {clause}, "
                f"but the config sets {shown}, which leaves it to the NOS default; set fec rs"
            )
            yield LintFinding(d, p, "fec rs", shown, msg)


def _mtu(cable: str, checked: list[tuple[str, str, _Port | None]]) -> Iterator[LintFinding]:
    """Both switch ends of a cable set the same MTU (where both set one)."""
    mtus = [(d, p, got.mtu) for d, p, got in checked if got is not None and got.mtu is not None]
    if len(mtus) == 2 and mtus[0][2] != mtus[1][2]:
        (d, p, a), (e, q, b) = mtus
        msg = f"the two ends of cable {cable} set different MTUs ({d} {p} {a}, {e} {q} {b}): frames between them are dropped"
        yield LintFinding(d, p, f"mtu {b} (as {e} {q})", f"mtu {a}", msg)


def _rows(cabling: str) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(cabling))
    need = {"device", "port", "peer_device", "peer_port", "speed_gbps"}
    if reader.fieldnames is None or not need <= set(reader.fieldnames):
        msg = f"cabling.csv: the header must name {', '.join(sorted(need))} (as render writes it); render again"
        raise InputError([Finding((), msg, file="cabling.csv")], "cabling.csv")
    rows = list(reader)
    bad = next((r for r in rows if not str(r["speed_gbps"]).isdigit()), None)
    if bad is not None:
        msg = f"cabling.csv: {bad['device']} {bad['port']}: speed_gbps {bad['speed_gbps']!r} is not a whole number of Gb/s"
        raise InputError([Finding((), msg, file="cabling.csv")], "cabling.csv")
    return rows


def _resolve(model_name: str, nos: str, parsed: PhysConfig) -> tuple[dict[str, _Port | None], list[LintFinding], list[str]]:
    """Every front-panel port name of the model: the port as its cage's mode and the config make it, or None where
    the cage's mode has no such port; and the breakout / speed / FEC findings of the switch."""
    model = SWITCH_MODELS[model_name]
    index = _port_index(model_name, nos)
    fanouts = _cage_fanouts(model_name, nos, parsed)
    ports: dict[str, _Port | None] = {}
    findings: list[LintFinding] = []
    loose: list[str] = []
    device = parsed.device
    for name, candidates in index.items():
        cage = candidates[0][0]
        fanout = fanouts.get(cage, model.ports_per_cage)
        entry = next((c for c in candidates if c[1] == fanout), None)
        got = parsed.ports.get(name)
        if entry is None:
            ports[name] = None  # a port of another breakout mode: absent unless the config sets it up
            if got is not None:
                modes = ", ".join(f"{f}x" for _, f, _, _ in candidates)
                msg = f"{name} is no port of its cage as broken out ({fanout}x; it exists in the {modes} modes): configure the cage's breakout"
                findings.append(LintFinding(device, name, f"its cage in {modes} mode", f"{fanout}x", msg))
            continue
        got = got or PhysPort()
        _, fanout, mode_speed, allowed = entry
        speed = got.speed_gbps or mode_speed
        lanes = got.lanes or max(model.lanes // fanout, 1)
        ports[name] = _Port(fanout, mode_speed, speed, lanes, got.mtu, got.fec)
        findings.extend(_speed_allowed((model.name, device, name), (fanout, mode_speed, allowed), speed, loose))
        findings.extend(_fec(device, name, speed, lanes, got))
    if nos == "sonic":
        findings.extend(_sonic_modes(model_name, parsed))
    return ports, findings, loose


def _speed_allowed(
    where: tuple[str, str, str], entry: tuple[int, int, tuple[int, ...] | None], speed: int, loose: list[str]
) -> Iterator[LintFinding]:
    """The port runs a speed its cage's mode allows; without a catalog list, one not above the mode's (``loose``)."""
    model, device, name = where
    fanout, mode, allowed = entry
    if allowed is None and speed != mode:
        loose.append(name)
        if speed <= mode:
            return
        allowed = (mode,)
    if allowed is not None and speed not in allowed:
        shown = ", ".join(f"{s}G" for s in allowed)
        msg = f"{name} runs {speed}G, which its cage's {fanout}x{mode}G breakout mode on the {model} does not allow ({shown})"
        yield LintFinding(device, name, f"one of {shown}", f"{speed}G", msg)


def _fec(device: str, name: str, speed: int, lanes: int, got: PhysPort) -> Iterator[LintFinding]:
    """No FEC but RS where the PHY includes it (``fabric.catalog.fec``: >= 50G per lane, or 100G over 4 x 25G lanes)."""
    clause = rs_fec_clause(speed, lanes)
    if clause is not None and got.fec in ("none", "fc"):
        msg = f"{name} runs {speed}G over {lanes} lane(s): RS-FEC required by {clause}, but FEC is set to {got.fec}; set fec rs"
        yield LintFinding(device, name, "fec rs", f"fec {got.fec}", msg)


def _sonic_modes(model_name: str, parsed: PhysConfig) -> Iterator[LintFinding]:
    """Every BREAKOUT_CFG mode is one the catalog (the platform's platform.json / hwsku.json) lists."""
    model = SWITCH_MODELS[model_name]
    assert model.sonic is not None
    known = {
        *model.sonic.breakout_modes,
        *(k.breakout_mode for k in model.sonic.skus),
        *(p.breakout_mode for k in model.sonic.skus for p in k.other_ports),
    }
    for port, mode in parsed.breakouts.items():
        if mode not in known:
            msg = f"BREAKOUT_CFG {port}: {mode!r} is no breakout mode of the {model.name}'s platform ({', '.join(sorted(known))})"
            yield LintFinding(parsed.device, port, "a platform breakout mode", mode, msg)


def _cage_fanouts(model_name: str, nos: str, parsed: PhysConfig) -> dict[int, int]:
    """Cage (0-based) -> ports it is broken out into, as the config sets it (Cumulus, SONiC and NX-OS breakout lines,
    EOS the lanes of the cage's lane-1 port)."""
    index = _port_index(model_name, nos)
    out: dict[int, int] = {}
    if nos == "eos":  # EOS splits a cage by the lanes its lane-1 port's speed names (speed 400g-4: 2 ports of 4 lanes)
        lanes = SWITCH_MODELS[model_name].lanes
        for name, port in parsed.ports.items():
            if port.lanes and name in index and name.endswith("/1"):
                out[index[name][0][0]] = max(lanes // port.lanes, 1)
        return out
    for key, mode in parsed.breakouts.items():
        count = mode.split("x", 1)[0] if nos in ("cumulus", "sonic") else mode.rsplit("-", 1)[-1].rstrip("x")
        if not count.isdigit():
            continue
        if nos == "nxos":
            out[int(key) - 1] = int(count)
        elif key in index:
            out[index[key][0][0]] = int(count)
    return out


@cache
def _port_index(model_name: str, nos: str) -> dict[str, tuple[_Entry, ...]]:
    """Port name -> every (cage, fanout, mode speed, allowed speeds or None) it is a port of, over the model's breakout
    modes, its uplink cages and its SONiC SKUs' other ports."""
    model = SWITCH_MODELS[model_name]
    found: dict[str, list[_Entry]] = {}
    for speed in model.speeds():
        fanout = model.fanout(speed) or 1
        mode = max(s for s in model.speeds() if (model.fanout(s) or 1) == fanout)
        try:
            names = [model.port_name(nos, i, speed) for i in range(model.radix(speed) or 0)]
        except ValueError:
            continue  # no reference names a breakout port under this NOS
        for i, name in enumerate(names):
            entry = (i // fanout if fanout >= model.ports_per_cage else i // model.ports_per_cage, fanout, mode, model.port_speeds(fanout))
            if entry not in found.setdefault(name, []):
                found[name].append(entry)
    for k, name in enumerate(model.uplink_port_names(nos)):
        found.setdefault(name, []).append((model.cages + k, 1, model.uplink_speed_gbps or model.speed_gbps, None))
    if model.sonic and nos == "sonic":
        for sku in model.sonic.skus:
            for port in sku.other_ports:
                entry = (port.index - 1, 1, port.speed_gbps, mode_speeds(port.breakout_mode))
                if entry not in found.setdefault(port.name, []):
                    found[port.name].append(entry)
    return {name: tuple(v) for name, v in found.items()}


PHYS_FILE = {"cumulus": "nvue.sh", "sonic": "config_db.json", "eos": "startup-config", "nxos": "running-config"}
