"""The telemetry side of the contract: each switch config's gNMI server against the collector's target for it.

``export telemetry`` writes ``telemetry/gnmic.yaml`` with one target per switch at ``<management address>:<port>``;
the render gives EOS and NX-OS switches the gNMI server (``fabric.plan.gnmi``). If the two disagree (a hand-edited
port, a server in the wrong VRF, a config without the server) the collector sees nothing and no alert can fire, so
the linter compares them. Defaults when the config names no port: EOS 6030 ("listens by default on TCP/6030",
aristanetworks.github.io/openmgmt "OpenConfig"), NX-OS 50051 ("Default is 50051", CiscoSE/NexusProgrammability gNMI
Device Configuration), Cumulus 9339 (CL 5.13+ "gNMI Streaming": "The default port is 9339"). An EOS transport without
``vrf`` listens in the default VRF (openmgmt: "Default VRF"); NX-OS's gRPC agent takes requests in the management VRF
unless told otherwise (same Cisco page); a Cumulus gNMI server listens on its ``listening-address``, which must be the
management address the collector dials.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import yaml
from hier_config import Platform, get_hconfig

from fabric.errors import Finding, InputError
from fabric.export.telemetry.gnmi import SONIC_PROCESSORS
from fabric.lint.rules import LintFinding
from fabric.plan.gnmi import GNMI_PORTS, gnmi_port
from fabric.plan.types import ClusterPlan

NXOS_MANAGEMENT_VRF = "management"


@dataclass(frozen=True, slots=True)
class GnmiServer:
    """A switch config's gNMI server: its port, and the VRF (EOS, NX-OS) or address (Cumulus) it listens in."""

    port: int
    bind: str


def parse_gnmi_server(nos: str, text: str) -> GnmiServer | None:
    """The gNMI server an EOS, NX-OS or Cumulus config runs; None when it runs none.

    Example:
        >>> parse_gnmi_server("eos", "management api gnmi\\n   transport grpc GNMI\\n      vrf mgmt\\n")
        GnmiServer(port=6030, bind='mgmt')
        >>> parse_gnmi_server("nxos", "feature grpc\\ngrpc port 50052\\n")
        GnmiServer(port=50052, bind='management')
        >>> parse_gnmi_server("nxos", "feature bgp\\n") is None
        True
        >>> parse_gnmi_server("cumulus", "nv set system gnmi-server listening-address 10.0.0.5\\nnv set system gnmi-server state enabled\\n")
        GnmiServer(port=9339, bind='10.0.0.5')
    """
    if nos == "eos":
        return _eos(text)
    if nos == "cumulus":
        return _cumulus(text)
    lines = {line.strip() for line in text.splitlines()}
    if "feature grpc" not in lines:
        return None
    port = next((int(m.group(1)) for line in lines if (m := re.fullmatch(r"grpc port (\d+)", line))), GNMI_PORTS["nxos"])
    return GnmiServer(port, NXOS_MANAGEMENT_VRF)


def _cumulus(text: str) -> GnmiServer | None:
    settings: dict[str, str] = {}
    for line in text.splitlines():
        if m := re.fullmatch(r"nv set system gnmi-server (\S+) (\S+)", line.strip()):
            settings[m.group(1)] = m.group(2)
    if settings.get("state") != "enabled":
        return None
    port = settings.get("port", "")
    return GnmiServer(int(port) if port.isdigit() else GNMI_PORTS["cumulus"], settings.get("listening-address", "none"))


def _eos(text: str) -> GnmiServer | None:
    config = get_hconfig(Platform.ARISTA_EOS, text)
    api = config.get_child(equals="management api gnmi")
    transport = next((c for c in api.children if c.text.startswith("transport grpc ")), None) if api else None
    if transport is None:
        return None
    port, vrf = GNMI_PORTS["eos"], "default"
    for line in (c.text for c in transport.children):
        if m := re.fullmatch(r"port (\d+)", line):
            port = int(m.group(1))
        elif m := re.fullmatch(r"vrf (\S+)", line):
            vrf = m.group(1)
    return GnmiServer(port, vrf)


def collector_ports(text: str, source: str) -> dict[str, int]:
    """Switch name -> the port gnmic dials, from a ``gnmic.yaml`` (targets keyed ``address:port`` with a ``name``).

    Raises:
        InputError: the file is no YAML mapping of targets.
    """
    try:
        document: object = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        msg = f"the gnmic collector config is not YAML ({exc}); write it again with fabric export telemetry"
        raise InputError([Finding(("targets",), msg, file=source)], source) from exc
    targets = cast("dict[object, object]", document).get("targets") if isinstance(document, dict) else None
    if not isinstance(targets, dict):
        msg = "the gnmic collector config has no 'targets' mapping; write it again with fabric export telemetry"
        raise InputError([Finding(("targets",), msg, file=source)], source)
    ports: dict[str, int] = {}
    for address, target in cast("dict[object, object]", targets).items():
        name = cast("dict[object, object]", target).get("name") if isinstance(target, dict) else None
        port = str(address).rpartition(":")[2]
        if isinstance(name, str) and port.isdigit():
            ports[name] = int(port)
    return ports


def lint_gnmi(plan: ClusterPlan, configs: Mapping[str, str | None], gnmic: str, source: str = "telemetry/gnmic.yaml") -> list[LintFinding]:
    """Findings where a switch's gNMI server and the collector's target for it disagree (every switch whose gNMI server
    the render configures: EOS, NX-OS, Cumulus 5.13+).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.render import render_configs
        >>> from fabric.export.telemetry.gnmi import gnmic_config
        >>> plan = plan_cluster(load_cluster("tests/data/render/eos/cluster.yaml"))
        >>> files = render_configs(plan)
        >>> configs = {s.name: files[f"switches/{s.name}/startup-config"] for s in plan.fabric.switches}
        >>> lint_gnmi(plan, configs, gnmic_config(plan))
        []
        >>> str(lint_gnmi(plan, configs, gnmic_config(plan).replace(":6030", ":6031"))[0])
        'telemetry/gnmic.yaml: target leaf01: the collector must dial the port the switch serves gNMI on (expected 6030, found 6031)'
    """
    fabric = plan.fabric
    if fabric is None or fabric.link_layer != "ethernet" or not fabric.management.gnmi:
        return []
    switches = sorted((s for s in fabric.switches if gnmi_port(s.nos, s.nos_version, enabled=True)), key=lambda s: s.name)
    if not switches:
        return []
    dialled = collector_ports(gnmic, source)
    findings: list[LintFinding] = []
    for switch in switches:
        text = configs.get(switch.name)
        if text is None:
            continue  # lint_configs reports the missing file
        server = parse_gnmi_server(switch.nos, text)
        bind = _expected_bind(switch.nos, fabric.management.vrf, switch.mgmt_address)
        if server is None:
            message = "the switch runs no gNMI server, so the collector reads nothing from it"
            findings.append(LintFinding(switch.name, "gnmi", f"a gNMI server on {bind}", "none", message))
            continue
        if server.bind != bind:
            message = "the gNMI server must listen where the collector reaches the switch: its management VRF or address"
            findings.append(LintFinding(switch.name, "gnmi listens on", bind, server.bind, message))
        port = dialled.get(switch.name)
        if port != server.port:
            message = "the collector must dial the port the switch serves gNMI on"
            findings.append(LintFinding(source, f"target {switch.name}", str(server.port), str(port) if port else "no target", message))
    return findings


def lint_gnmic_processors(gnmic: str, source: str = "telemetry/gnmic.yaml") -> list[LintFinding]:
    """Findings where ``gnmic.yaml`` subscribes SONiC switches but a prometheus output with ``strings-as-labels`` lacks
    a processor ``export telemetry`` gives it: without them SONiC's string fields (a queue's watchdog status, a port's
    ``alias`` and ``lanes``, a module's ``N/A``) become labels on every series of the answer (``telemetry.sonic``,
    ``telemetry.sonic_link``), and the flap and optics fields may never become numbers.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.export.telemetry.gnmi import gnmic_config
        >>> text = gnmic_config(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        >>> lint_gnmic_processors(text)
        []
        >>> [(f.where, f.expected, f.actual) for f in lint_gnmic_processors(text.replace("    - sonic-link-drop-strings\\n", ""))]
        [('outputs.prometheus.event-processors', 'sonic-link-drop-strings', 'absent')]
    """
    document = _document(gnmic, source)
    subscriptions = document.get("subscriptions")
    names = [str(n) for n in cast("dict[object, object]", subscriptions)] if isinstance(subscriptions, dict) else []
    if not any(name.startswith("sonic-") for name in names):
        return []
    declared = document.get("processors")
    processors = cast("dict[object, object]", declared) if isinstance(declared, dict) else {}
    outputs = document.get("outputs")
    findings: list[LintFinding] = []
    for out, config in (cast("dict[object, object]", outputs) if isinstance(outputs, dict) else {}).items():
        settings = cast("dict[object, object]", config) if isinstance(config, dict) else {}
        if settings.get("type") != "prometheus" or not settings.get("strings-as-labels"):
            continue  # without strings-as-labels gnmic drops a value that is no number
        listed = settings.get("event-processors")
        applied = [str(p) for p in cast("list[object]", listed)] if isinstance(listed, list) else []
        for name, body in SONIC_PROCESSORS.items():
            message = "SONiC strings would become labels: the output must apply this processor as export telemetry writes it"
            if name not in applied:
                findings.append(LintFinding(source, f"outputs.{out}.event-processors", name, "absent", message))
            elif processors.get(name) != body:
                found = "absent" if name not in processors else "changed"
                findings.append(LintFinding(source, f"processors.{name}", yaml.safe_dump(body, width=10_000).strip(), found, message))
    return findings


def _document(text: str, source: str) -> dict[object, object]:
    try:
        document: object = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        msg = f"the gnmic collector config is not YAML ({exc}); write it again with fabric export telemetry"
        raise InputError([Finding((), msg, file=source)], source) from exc
    if not isinstance(document, dict):
        msg = "the gnmic collector config is no YAML mapping; write it again with fabric export telemetry"
        raise InputError([Finding((), msg, file=source)], source)
    return cast("dict[object, object]", document)


def _expected_bind(nos: str, vrf: str, mgmt_address: str) -> str:
    if nos == "cumulus":
        return mgmt_address.split("/", maxsplit=1)[0]
    return vrf if nos == "eos" else NXOS_MANAGEMENT_VRF


def read_gnmic(directory: Path | None) -> tuple[str, str] | None:
    """``<directory>/telemetry/gnmic.yaml`` (text, path) as ``export telemetry`` writes it; None when absent.

    Raises:
        InputError: the file cannot be read or is not UTF-8 text.
    """
    if directory is None:
        return None
    path = directory / "telemetry" / "gnmic.yaml"
    if not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"cannot read the gnmic collector config ({exc}); it must be a readable UTF-8 text file"
        raise InputError([Finding((), msg, file=str(path))], str(path)) from exc
