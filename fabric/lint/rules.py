"""The contract linter: the NIC side (what the node roles apply) and every switch config must agree."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from hier_config.exceptions import DuplicateChildError

from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding, InputError
from fabric.lint.forms import has_forms, unknown_commands
from fabric.lint.nics import nic_findings
from fabric.lint.nvue_schema import refusals as nvue_refusals
from fabric.lint.nvue_schema import releases as nvue_releases
from fabric.lint.parse.qos import CONFIG_FILE, PARSERS, SwitchQos
from fabric.lint.watchdog import watchdog_findings
from fabric.model.qos import RoceSpec
from fabric.model.rules.transport import ETHERNET_OVERHEAD
from fabric.plan.buffers import SwitchBuffers, xoff_bytes
from fabric.plan.compute.facts import PortFacts, SwitchFacts, build_switch_facts
from fabric.plan.types import ClusterPlan


@dataclass(frozen=True, slots=True)
class LintFinding:
    """One disagreement: which device and section, what the contract expects and what the config has."""

    device: str
    where: str
    expected: str
    actual: str
    message: str

    def __str__(self) -> str:
        return f"{self.device}: {self.where}: {self.message} (expected {self.expected}, found {self.actual})"


def lint_configs(plan: ClusterPlan, configs: Mapping[str, str | None], sources: Mapping[str, str] | None = None) -> list[LintFinding]:
    """Lint every switch's config text (``None``: the file is missing) against the plan's contract.

    ``sources`` names the file each config was read from, for the error on a config that cannot be parsed.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.render import render_configs
        >>> plan = plan_cluster(load_cluster("tests/data/render/eos/cluster.yaml"))
        >>> files = render_configs(plan)
        >>> lint_configs(plan, {s.name: files[f"switches/{s.name}/startup-config"] for s in plan.fabric.switches})
        []

    Raises:
        InputError: a config cannot be parsed (not JSON, a duplicated section, ...), naming the switch and file.
    """
    facts = {f.switch.name: f for f in build_switch_facts(plan)}
    findings: list[LintFinding] = []
    observed: dict[str, SwitchQos] = {}
    for name, fact in facts.items():
        text = configs.get(name)
        nos = fact.switch.nos
        if nos not in CONFIG_FILE:
            continue
        if text is None:
            findings.append(LintFinding(name, CONFIG_FILE[nos], "a config", "no file", "the switch has no config to check"))
            continue
        findings.extend(_forms(name, nos, fact.switch.nos_version, text))
        findings.extend(schema_findings(name, nos, fact.switch.nos_version, text))
        parser = PARSERS.get(nos)
        if parser is None:
            continue  # InfiniBand switches: no Ethernet contract to check
        try:
            observed[name] = parser(name, text)
        except (ValueError, IndexError, DuplicateChildError) as exc:  # what the parsers raise on malformed text
            file = CONFIG_FILE[fact.switch.nos]
            msg = f"switch {name}: its {file} cannot be parsed ({exc}); fix the file or render it again"
            raise InputError([Finding((), msg, file=(sources or {}).get(name, file))], (sources or {}).get(name, file)) from exc
    buffers = plan.buffers_by_switch()
    for name, qos in observed.items():
        fact = facts[name]
        if fact.roce is not None and qos.qos_modelled:
            findings.extend(_contract(qos, fact.roce, buffers.get(name)))
            findings.extend(LintFinding(name, w, e, a, m) for w, e, a, m in nic_findings(plan, fact, qos, fact.roce))
            for where, expected, found in watchdog_findings(fact.switch.nos, configs.get(name) or "", fact.roce.pfc_watchdog):
                findings.append(LintFinding(name, where, expected, found, "the PFC watchdog must act as the contract says"))
        findings.extend(_ports(qos, fact, observed=observed, host_mtu=plan.plane("compute").mtu, roce=fact.roce))
    return findings


def _forms(device: str, nos: str, release: str, text: str) -> Iterator[LintFinding]:
    """Every line no cited command form of the switch's NOS and release matches (fabric/lint/forms)."""
    if not has_forms(nos):
        return
    for number, command in unknown_commands(nos, release, text):
        yield LintFinding(device, f"line {number}", "a known command", repr(command), f"no {nos} {release} command form matches this line")


def schema_findings(device: str, nos: str, release: str, text: str) -> list[LintFinding]:
    """Every ``nv set`` line of a Cumulus ``nvue.sh`` that NVIDIA's NVUE schema of ``release`` refuses (fabric/lint/nvue_schema);
    none when the switch runs another NOS, or ``nvueschema`` (requirements-dev.txt) or its model of the release is missing."""
    if nos != "cumulus" or release not in nvue_releases():
        return []
    expected = f"a line the NVUE schema of Cumulus Linux {release} accepts"
    return [
        LintFinding(device, f"nvue.sh line {r.line}", expected, repr(r.text), f"NVIDIA's NVUE schema refuses this line: {r.reason}")
        for r in nvue_refusals(release, text)
    ]


def contract_findings(qos: SwitchQos, roce: RoceSpec) -> Iterator[LintFinding]:
    """Where a switch's parsed QoS breaks the RoCE contract (the storage linter checks RoCE storage switches with it too)."""
    return _contract(qos, roce, None)


def _contract(qos: SwitchQos, roce: RoceSpec, buffers: SwitchBuffers | None) -> Iterator[LintFinding]:
    dev = qos.device
    if not qos.trust_dscp:
        yield LintFinding(dev, "qos trust", "dscp", "not trusted", "the switch does not classify by DSCP, so RoCE lands in the default class")
    got = qos.dscp_to_tc.get(roce.dscp)
    if got != roce.traffic_class:
        yield LintFinding(
            dev, f"dscp {roce.dscp}", f"traffic-class {roce.traffic_class}", _tc(got), "the RoCE DSCP must map to the lossless traffic class"
        )
    sharing = sorted(d for d, tc in qos.dscp_to_tc.items() if tc == roce.traffic_class and d != roce.dscp)
    if sharing:
        yield LintFinding(
            dev, f"traffic-class {roce.traffic_class}", f"only dscp {roce.dscp}", f"also dscp {sharing}", "other traffic shares the lossless class"
        )
    if qos.pfc_priorities != set(roce.pfc_priorities):
        want = ",".join(map(str, roce.pfc_priorities))
        yield LintFinding(dev, "pfc", f"priorities {want}", f"priorities {_set(qos.pfc_priorities)}", "PFC must run on exactly the RoCE priority")
    ecn = qos.ecn.get(roce.traffic_class)
    want_ecn = f"{roce.ecn.min_threshold_bytes}-{roce.ecn.max_threshold_bytes} B at {roce.ecn.probability}%"
    got_ecn = f"{ecn.min_bytes}-{ecn.max_bytes} B at {ecn.probability}%" if ecn else "no ECN"
    if want_ecn != got_ecn:
        why = "ECN marking on the lossless queue differs from the contract"
        if buffers is not None:  # say how the contract's thresholds were reached (fabric.plan.buffers)
            why += f"; {buffers.ecn_min.explain()}; {buffers.ecn_max.explain()}"
        yield LintFinding(dev, f"ecn traffic-class {roce.traffic_class}", want_ecn, got_ecn, why)
    cnp = qos.dscp_to_tc.get(roce.cnp.dscp)
    if cnp != roce.cnp.traffic_class:
        yield LintFinding(dev, f"dscp {roce.cnp.dscp}", f"traffic-class {roce.cnp.traffic_class}", _tc(cnp), "CNPs must reach their own class")
    if roce.cnp.strict and roce.cnp.traffic_class not in qos.strict_tcs:
        yield LintFinding(dev, f"scheduler traffic-class {roce.cnp.traffic_class}", "strict", "not strict", "CNPs must be served first")


def _ports(qos: SwitchQos, fact: SwitchFacts, *, observed: Mapping[str, SwitchQos], host_mtu: int, roce: RoceSpec | None) -> Iterator[LintFinding]:
    if not qos.qos_modelled:
        return
    for port in fact.ports:
        got = qos.ports.get(port.name)
        where = f"port {port.name} ({port.description})"
        if got is None:
            yield LintFinding(qos.device, where, "configured", "absent", "a cabled port is missing from the config")
            continue
        if roce is not None and not got.pfc:
            yield LintFinding(qos.device, where, "PFC on", "PFC off", "a RoCE port without PFC drops on congestion")
        if roce is not None and roce.pfc_watchdog.enabled and got.pfc and not got.watchdog:
            yield LintFinding(qos.device, where, "watchdog on", "watchdog off", "PFC without a watchdog can spread a pause storm")
        if roce is not None and got.cable_m is not None and got.cable_m < port.cable_m:
            yield _headroom(qos.device, where, port, got.cable_m)
        limit = SWITCH_MODELS[fact.switch.model].max_mtu(fact.switch.nos) if fact.switch.model in SWITCH_MODELS else None
        if got.mtu is not None and limit is not None and got.mtu > limit:
            yield LintFinding(
                qos.device, where, f"mtu <= {limit}", f"mtu {got.mtu}", f"{fact.switch.nos} on {fact.switch.model} refuses an MTU above {limit}"
            )
        yield from _mtu(qos.device, where, port, mtu=got.mtu, observed=observed, host_mtu=host_mtu)


def _headroom(device: str, where: str, port: PortFacts, told_m: int) -> LintFinding:
    """A switch told a shorter cable than the plan's sizes too little PFC headroom: the explanation names both sizes."""
    need, sized = xoff_bytes(port.speed_gbps, port.cable_m, port.mtu), xoff_bytes(port.speed_gbps, told_m, port.mtu)
    why = (
        f"the switch sizes PFC headroom for {told_m} m ({sized} B), but the cable is {port.cable_m} m and needs {need} B: "
        f"xoff = (301 + 216*cable_m/100) * {port.speed_gbps} Gb/s + 272*{port.mtu}/100 (Linux mlx5 calculate_xoff, NVIDIA); "
        "frames in flight after PAUSE are dropped"
    )
    return LintFinding(device, f"{where} cable-length", f"cable-length >= {port.cable_m} m", f"cable-length {told_m} m", why)


def _mtu(device: str, where: str, port: PortFacts, *, mtu: int | None, observed: Mapping[str, SwitchQos], host_mtu: int) -> Iterator[LintFinding]:
    if port.kind == "host":
        if mtu is None or mtu < host_mtu + ETHERNET_OVERHEAD:
            yield LintFinding(
                device, where, f"mtu >= {host_mtu + ETHERNET_OVERHEAD}", _mtu_text(mtu), f"hosts send {host_mtu}-byte packets plus headers"
            )
        return
    peer = observed.get(port.peer)
    peer_port = peer.ports.get(port.peer_port) if peer is not None and peer.qos_modelled else None
    if peer_port is not None and peer_port.mtu != mtu:
        yield LintFinding(
            device, where, f"{_mtu_text(peer_port.mtu)} (as {port.description})", _mtu_text(mtu), "both ends of a fabric link need one MTU"
        )


def _tc(value: int | None) -> str:
    return "unmapped" if value is None else f"traffic-class {value}"


def _set(values: set[int]) -> str:
    return ",".join(map(str, sorted(values))) or "none"


def _mtu_text(mtu: int | None) -> str:
    return "no mtu" if mtu is None else f"mtu {mtu}"
