"""The storage / in-band linter: plane separation, MTU per plane end to end, the storage RoCE contract and LAG members.

Each storage / in-band switch's config (rendered or hand-edited) is parsed back (``fabric.lint.parse.l2``) and checked
against the plan and against the switches at the other end of its cables:

- **plane separation**: a switch carries only its network's plane VLANs; a host port sits in its own plane's VLAN; a
  trunk carries only plane VLANs; an SVI exists only where the plan puts a plane's gateway, in that plane's VRF, and no
  VRF holds two planes; no static route in a plane's VRF points into another plane;
- **MTU**: a host's packets fit the switch port (or its bond) it is cabled to, a bond's members agree with it, and both
  ends of a switch-to-switch cable take the largest plane MTU;
- **RoCE storage**: with ``roce: true`` the switch meets the cluster's lossless contract and every storage port has the
  PFC watchdog;
- **LAG members**: every bond has exactly the members the cabling gives it on this switch, with the planned MLAG id, and
  both ends of a peerlink or uplink cable are members of their bonds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from ipaddress import IPv4Interface, IPv4Network

from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding, InputError
from fabric.lint.forms import has_forms, unknown_commands
from fabric.lint.parse.l2 import L2_PARSERS, L2Config
from fabric.lint.parse.qos import PARSERS
from fabric.lint.rules import LintFinding, contract_findings, schema_findings
from fabric.plan.natural import natural_key
from fabric.plan.storage.facts import StorageSwitchFacts, bond_name, build_storage_facts
from fabric.plan.storage.types import StorageNetworkPlan
from fabric.plan.types import ClusterPlan

STORAGE_CONFIG_FILE = {"cumulus": "nvue.sh", "sonic": "config_db.json", "eos": "startup-config", "nxos": "running-config"}


def lint_storage(plan: ClusterPlan, configs: Mapping[str, str | None]) -> list[LintFinding]:
    """Lint every storage / in-band switch's config text (``None``: the file is missing) against the plan and its peers.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.render import render_configs
        >>> plan = plan_cluster(load_cluster("inventories/onprem-ib/cluster.yaml"))
        >>> files = render_configs(plan)
        >>> lint_storage(plan, {n: files.get(f"switches/{n}/{f}") for n, f in storage_config_files(plan).items()})
        []

    Raises:
        InputError: a config cannot be parsed, naming the switch.
    """
    findings: list[LintFinding] = []
    observed: dict[str, L2Config] = {}
    facts = build_storage_facts(plan)
    for fact in facts:
        name, nos = fact.switch.name, fact.switch.nos
        text = configs.get(name)
        if text is None:
            findings.append(LintFinding(name, STORAGE_CONFIG_FILE[nos], "a config", "no file", "the switch has no config to check"))
            continue
        if has_forms(nos):
            findings.extend(
                LintFinding(name, f"line {n}", "a known command", repr(c), f"no {nos} {fact.nos_version} command form matches this line")
                for n, c in unknown_commands(nos, fact.nos_version, text)
            )
        findings.extend(schema_findings(name, nos, fact.nos_version, text))
        try:
            observed[name] = L2_PARSERS[nos](name, text)
        except (ValueError, KeyError) as exc:
            msg = f"switch {name}: its {STORAGE_CONFIG_FILE[nos]} cannot be parsed ({exc}); fix the file or render it again"
            raise InputError([Finding((), msg)]) from exc
        if fact.roce is not None:
            findings.extend(_roce(fact, text, observed[name]))
    nets = {net.name: net for net in plan.storage}
    for fact in facts:
        config = observed.get(fact.switch.name)
        if config is None:
            continue
        net = nets[fact.switch.network]
        findings.extend(_separation(plan, net, fact, config))
        findings.extend(_host_mtu(plan, net, fact, config))
        findings.extend(_lags(net, fact, config, observed))
    return findings


def storage_config_files(plan: ClusterPlan) -> dict[str, str]:
    """The config file of every storage / in-band switch, by switch name (``switches/<name>/<file>`` as render writes it)."""
    return {s.name: STORAGE_CONFIG_FILE[s.nos] for net in plan.storage for s in net.switches}


def _plane_of_vlan(plan: ClusterPlan) -> dict[int, str]:
    return {p.vlan: p.name for p in plan.planes if p.vlan is not None}


def _separation(plan: ClusterPlan, net: StorageNetworkPlan, fact: StorageSwitchFacts, config: L2Config) -> Iterator[LintFinding]:
    name = fact.switch.name
    planes = {s.vlan: s.plane for s in net.segments}
    owner = _plane_of_vlan(plan)

    def whose(vlan: int) -> str:
        return f"VLAN {vlan} ({owner.get(vlan, 'no plane')})"

    for vlan in sorted(config.vlans - set(planes)):
        msg = f"the bridge carries a VLAN that is not a plane of the {net.name} network"
        yield LintFinding(name, "bridge", f"VLANs {sorted(planes)}", whose(vlan), msg)
    for link in (x for x in net.links if x.a_device == name and x.kind in ("storage", "inband")):
        vlan = _access(config, link.a_port)
        if vlan != link.vlan:
            got = whose(vlan) if vlan is not None else "no VLAN"
            msg = f"the {link.b_device} {link.plane} port is not in its plane's VLAN: the planes leak into each other"
            yield LintFinding(name, link.a_port, f"VLAN {link.vlan} ({link.plane})", got, msg)
    for iface_name, iface in sorted(config.interfaces.items()):
        for vlan in sorted(iface.trunk - set(planes)):
            yield LintFinding(name, iface_name, f"VLANs {sorted(planes)}", whose(vlan), "a trunk carries a VLAN of no plane of this network")
    yield from _svis(plan, fact, config)


def _access(config: L2Config, port: str) -> int | None:
    bond = config.bond_of(port)
    iface = config.interfaces.get(bond or port)
    return iface.access if iface else None


def _svis(plan: ClusterPlan, fact: StorageSwitchFacts, config: L2Config) -> Iterator[LintFinding]:
    name = fact.switch.name
    planned = {vlan: (plane, vrf) for plane, vlan, vrf, _, _ in fact.switch.gateways}
    owner = _plane_of_vlan(plan)
    vrf_planes: dict[str | None, set[str]] = {}
    for iface_name, iface in sorted(config.interfaces.items()):
        vlan = config.svi_vlan(iface_name)
        if vlan is None or not (iface.svi or iface.addresses):
            continue
        plane = owner.get(vlan, f"VLAN {vlan}")
        vrf_planes.setdefault(iface.vrf, set()).add(plane)
        if vlan not in planned:
            msg = f"an SVI routes the {plane} plane here, where the plan gives it no gateway; it could route between planes"
            yield LintFinding(name, iface_name, "no SVI", ", ".join(iface.addresses) or "an SVI", msg)
            continue
        want_plane, want_vrf = planned[vlan]
        if iface.vrf != want_vrf:
            yield LintFinding(name, iface_name, f"vrf {want_vrf}", f"vrf {iface.vrf}", f"the {want_plane} gateway is outside its plane's VRF")
        cidr = IPv4Network(plan.plane(want_plane).cidr or "0.0.0.0/32")
        for address in iface.addresses:
            if IPv4Interface(address).ip not in cidr:
                yield LintFinding(name, iface_name, f"an address in {cidr}", address, f"the {want_plane} gateway has an address of another network")
    for vrf, planes in sorted(vrf_planes.items(), key=lambda kv: str(kv[0])):
        if len(planes) > 1:
            msg = "one VRF holds the gateways of several planes, so they route into each other"
            yield LintFinding(name, f"vrf {vrf}", "one plane per VRF", " and ".join(sorted(planes)), msg)
    cidrs = {p.name: IPv4Network(p.cidr) for p in plan.planes if p.cidr}
    own = {vrf: plane for plane, _, vrf, _, _ in fact.switch.gateways}
    for vrf, prefix, via in config.routes:
        plane = own.get(vrf)
        for other, cidr in cidrs.items():
            if plane is not None and other != plane and IPv4Network(prefix, strict=False).overlaps(cidr):
                msg = f"a static route in the {plane} VRF reaches the {other} plane"
                yield LintFinding(name, f"vrf {vrf} route {prefix}", "no route to another plane", f"via {via}", msg)


def _no_l2_mtu(nos: str, model: str) -> bool:
    """Whether the switch has no per-port L2 MTU command (EOS on a model without ``l2 mtu``, see the catalog's ``l2_mtu``)."""
    support = SWITCH_MODELS[model].nos.get("eos") if nos == "eos" else None
    return support is not None and not support.l2_mtu


def _mtu_of(config: L2Config, port: str) -> int | None:
    bond = config.bond_of(port)
    if bond is not None and config.interfaces[bond].mtu is not None:
        return config.interfaces[bond].mtu
    iface = config.interfaces.get(port)
    return iface.mtu if iface else None


def _host_mtu(plan: ClusterPlan, net: StorageNetworkPlan, fact: StorageSwitchFacts, config: L2Config) -> Iterator[LintFinding]:
    name = fact.switch.name
    host_mtu = {(n.hostname, i.name): i.mtu for n in plan.nodes for i in n.interfaces}
    plane_mtu = {s.plane: s.mtu for s in net.segments}
    for link in (x for x in net.links if x.a_device == name and x.kind in ("storage", "inband")):
        want = host_mtu.get((link.b_device, link.b_port), plane_mtu[link.plane])
        got = _mtu_of(config, link.a_port)
        if got is None and _no_l2_mtu(fact.switch.nos, fact.switch.model):
            continue  # the platform has no per-port L2 MTU to check: it switches frames up to its fixed maximum
        if got is None or got < want:
            msg = f"MTU mismatch on the {link.plane} path: {link.b_device} {link.b_port} sends {want}-byte packets the port drops"
            yield LintFinding(name, link.a_port, f"mtu >= {want}", "no mtu" if got is None else f"mtu {got}", msg)
        bond = config.bond_of(link.a_port)
        member = config.interfaces.get(link.a_port)
        if bond is not None and member is not None and member.mtu not in (None, config.interfaces[bond].mtu):
            msg = f"a member's MTU differs from its bond {bond}'s"
            yield LintFinding(name, link.a_port, f"mtu {config.interfaces[bond].mtu}", f"mtu {member.mtu}", msg)


def _lags(net: StorageNetworkPlan, fact: StorageSwitchFacts, config: L2Config, observed: Mapping[str, L2Config]) -> Iterator[LintFinding]:
    name = fact.switch.name
    for bond in fact.bonds:
        iface = config.interfaces.get(bond.name)
        got = sorted(iface.members, key=natural_key) if iface else []
        if got != sorted(bond.members, key=natural_key):
            missing = sorted(set(bond.members) - set(got))
            what = f"{', '.join(missing)} missing" if missing else "other members"
            msg = f"LAG {bond.name} ({bond.description}) differs from its cables on this side ({what}): a LAG member missing on one side"
            yield LintFinding(name, bond.name, f"members {', '.join(bond.members)}", f"members {', '.join(got) or 'none'}", msg)
        if iface is not None and bond.mlag_id is not None and iface.mlag_id != bond.mlag_id:
            yield LintFinding(name, bond.name, f"mlag id {bond.mlag_id}", f"mlag id {iface.mlag_id}", "the MLAG pair must use one id per bond")
    yield from _far_ends(net, name, observed)


def _far_ends(net: StorageNetworkPlan, name: str, observed: Mapping[str, L2Config]) -> Iterator[LintFinding]:
    """Both ends of every peerlink and uplink cable that starts here: members of their bonds, one MTU, jumbo enough."""
    need = max(s.mtu for s in net.segments)
    nos = {s.name: s.nos for s in net.switches}
    for link in (x for x in net.links if x.a_device == name and x.kind in ("peerlink", "uplink")):
        far = observed.get(link.b_device)
        if far is None:
            continue
        ends = ((name, link.a_port, observed[name], link.bond), (link.b_device, link.b_port, far, link.b_bond))
        for device, port, config, planned in ends:
            bond = bond_name(nos[device], planned or "")
            if config.bond_of(port) != bond:
                msg = f"the {link.kind} cable {name} {link.a_port} - {link.b_device} {link.b_port} is in its LAG on one side only"
                yield LintFinding(device, port, f"member of {bond}", f"member of {config.bond_of(port) or 'no bond'}", msg)
        models = {s.name: s.model for s in net.switches}
        mtus = {_mtu_of(c, p) for d, p, c, _ in ends if not (_mtu_of(c, p) is None and _no_l2_mtu(nos[d], models[d]))}
        if not mtus:
            continue
        if len(mtus) > 1 or min((m or 0) for m in mtus) < need:
            shown = " vs ".join(f"{d} {p} {_mtu_of(c, p)}" for d, p, c, _ in ends)
            msg = f"MTU mismatch on the {net.name} path: both ends of a {link.kind} cable take the largest plane MTU"
            yield LintFinding(name, link.a_port, f"mtu {need} on both ends", shown, msg)


def _roce(fact: StorageSwitchFacts, text: str, config: L2Config) -> Iterator[LintFinding]:
    roce = fact.roce
    if roce is None:
        return
    parser = PARSERS.get(fact.switch.nos)
    if parser is not None:
        yield from contract_findings(parser(fact.switch.name, text), roce)
    if roce.pfc_watchdog.enabled:
        for port in (p for p in fact.ports if p.lossless):
            iface = config.interfaces.get(port.name)
            if iface is None or not iface.watchdog:
                msg = "a lossless storage port has no PFC watchdog, so a PFC storm stalls the storage plane"
                yield LintFinding(fact.switch.name, port.name, "pfc-watchdog", "none", msg)
