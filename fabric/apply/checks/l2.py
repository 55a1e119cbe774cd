"""Post-checks of the L2 planes' switches (storage / in-band MLAG pairs, OOB management switches): VLANs and ports,
read back from the switch and compared with the plan.

A storage / in-band or OOB switch runs no BGP and has no routes to watch; what carries its traffic is its bridge. So a
device's post-check passes when, before its deadline and for the hold time:

- every VLAN the plan gives the switch (each plane's segment, the OOB VLAN) is on its bridge;
- every planned port the switch has carries its VLANs: a host / BMC / switch-management access port its plane's VLAN,
  a peerlink, uplink or OOB uplink member every VLAN of the trunk (a member not bundled into its LAG carries none, so
  an unbundled port-channel member shows up here);
- every planned port and LAG that was up before the change is up after it (the MLAG peer link included).

What the switch says is read with iproute2 on the Linux-based NOSes: ``bridge -j vlan show`` (port → VLANs; a LAG's
VLANs are its members', by their ``master`` in ``ip -j link show``) and ``ip -j link show`` (operstate). Sources:
iproute2 bridge(8) "bridge vlan show" and ip-link(8), JSON with ``-j``; NVIDIA Cumulus Linux 5.9 user guide,
"VLAN-aware Bridge Mode" (VLANs of ``br_default`` in the kernel bridge, ``bridge -c vlan show``); SONiC's VLANs are
the kernel bridge ``Bridge``'s (SONiC Architecture, "vlanmgrd"). On EOS, ``show vlan | json`` (``vlans`` → id →
``interfaces``, where ``Cpu`` stands for the SVI and ``PeerEthernet…`` for the MLAG peer's ports) and
``show interfaces | json`` (``lineProtocolStatus``; a LAG member's ``interfaceMembership`` is
``"Member of Port-Channel5"``), the eAPI forms napalm's EOS driver and ANTA's test data read; not yet checked on a
device here. On NX-OS, ``show vlan brief``, ``show interface brief``, ``show port-channel summary`` and, on a vPC pair,
``show vpc brief``, all ``| json`` (``fabric.apply.checks.l2_nxos``, which cites its sources); a vPC pair's peer adjacency,
peer link and every vPC up before the change must be up after it. The plan's LAGs are watched under the NOS's own
names (``bond_name``: ``peerlink`` is NX-OS's ``port-channel2000``). A port the switch does not have (a breakout not yet
applied; on the twin, a port left uncabled) is not checked; a VLAN missing from the bridge always is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from fabric.apply.checks.l2_nxos import read_nxos_l2
from fabric.apply.checks.l2state import VPC_PREFIX, L2State
from fabric.apply.checks.routing import Waiting, hold_clean
from fabric.apply.session import Session
from fabric.apply.transaction import PostCheck
from fabric.errors import NxosReplyError, PushError
from fabric.plan.storage.facts import bond_name
from fabric.plan.types import ClusterPlan

L2_READERS = frozenset({"cumulus", "sonic", "eos", "nxos"})
_TRUNKS = ("peerlink", "uplink")


@dataclass(frozen=True, slots=True)
class L2Expect:
    """What the plan says one L2 switch's bridge carries.

    Attributes:
        vlans: ``(vlan, plane)`` of every VLAN on its bridge.
        ports: ``(port, vlans, what)`` of every planned port: the VLANs it must carry and what it is cabled to.
        lags: the LAGs the plan gives it, by the NOS's names (``peerlink``, ``port-channel2000``): up before, up after.
        vpc: one side of an NX-OS vPC pair: its peer adjacency, peer link and every vPC up before are up after.
    """

    vlans: tuple[tuple[int, str], ...]
    ports: tuple[tuple[str, tuple[int, ...], str], ...]
    lags: tuple[str, ...] = ()
    vpc: bool = False


def l2_expect(plan: ClusterPlan, name: str) -> L2Expect:
    """The plan's view of the bridge of storage / in-band or OOB switch ``name``.

    Raises:
        PushError: ``name`` is no storage / in-band or OOB switch of the plan.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> expect = l2_expect(plan_cluster(load_cluster("inventories/lab/cluster.yaml")), "stor-b")
        >>> expect.vlans, expect.ports, expect.lags
        (((101, 'storage'), (102, 'inband')), (('swp64s3', (101, 102), 'stor-a peerlink'),), ('peerlink',))
    """
    for net in plan.storage:
        switch = next((s for s in net.switches if s.name == name), None)
        if switch is not None:
            every = tuple(sorted(seg.vlan for seg in net.segments))
            ports: list[tuple[str, tuple[int, ...], str]] = []
            lags: set[str] = set()
            for x in net.links:
                if x.a_device == name:
                    ports.append((x.a_port, every if x.kind in _TRUNKS else (x.vlan,) if x.vlan else (), f"{x.b_device} {x.kind}"))
                    lags |= {bond_name(switch.nos, x.bond)} if x.bond and x.kind in _TRUNKS else set()
                elif x.b_device == name and x.kind in _TRUNKS:
                    ports.append((x.b_port, every, f"{x.a_device} {x.kind}"))
                    lags |= {bond_name(switch.nos, x.b_bond)} if x.b_bond else set()
            paired = switch.nos == "nxos" and any(x.kind == "peerlink" and name in (x.a_device, x.b_device) for x in net.links)
            return L2Expect(tuple(sorted((seg.vlan, seg.plane) for seg in net.segments)), tuple(ports), tuple(sorted(lags)), vpc=paired)
    oob = plan.oob
    if oob is not None and any(s.name == name for s in oob.switches):
        ports = [(x.a_port, (oob.vlan,), f"{x.b_device} {x.kind}") for x in oob.links if x.a_device == name]
        return L2Expect(((oob.vlan, "oob"),), tuple(ports))
    msg = f"{name}: not a storage / in-band or OOB switch of cluster '{plan.name}'"
    raise PushError(msg)


def read_l2(nos: str, session: Session, *, vpc: bool = False) -> L2State:
    """The bridge state of a switch (see the module docstring); ``vpc``: an NX-OS vPC pair's state too.

    Raises:
        PushError: a NOS this check cannot read yet (its L2 planes cannot be pushed until it can), or a reply it
            cannot trust (``fabric.errors.NxosReplyError``).
    """
    if nos not in L2_READERS:
        msg = f"no L2 post-check reader for {nos} yet (reads {', '.join(sorted(L2_READERS))}); push its plane once one exists"
        raise PushError(msg)
    if nos == "nxos":
        return read_nxos_l2(session.show, vpc=vpc)
    if nos == "eos":
        return eos_l2_state(session.show("show vlan | json"), session.show("show interfaces | json"))
    return l2_state(session.show("ip -j link show"), session.show("bridge -j vlan show"))


def eos_l2_state(vlans_json: str, interfaces_json: str) -> L2State:
    """Parse EOS's ``show vlan | json`` and ``show interfaces | json``; a Port-Channel member carries its LAG's VLANs.

    Example:
        >>> vlans = '{"vlans": {"101": {"interfaces": {"Port-Channel10": {}, "Cpu": {}}}, "102": {"interfaces": {"Ethernet3": {}}}}}'
        >>> links = {"Ethernet1": {"lineProtocolStatus": "up", "interfaceMembership": "Member of Port-Channel10"},
        ...          "Ethernet3": {"lineProtocolStatus": "down"}}
        >>> state = eos_l2_state(vlans, json.dumps({"interfaces": links}))
        >>> sorted(state.vlans), sorted(state.ports["Ethernet1"]), state.up["Ethernet3"]
        ([101, 102], [101], False)
    """
    vlans = json.loads(vlans_json or "{}").get("vlans", {})
    carried: dict[str, set[int]] = {}
    for vid, vlan in vlans.items():
        for port in vlan.get("interfaces", {}):
            if port != "Cpu" and not port.startswith("Peer"):
                carried.setdefault(port, set()).add(int(vid))
    ports = {port: frozenset(found) for port, found in carried.items()}
    links = json.loads(interfaces_json or "{}").get("interfaces", {})
    for name, link in links.items():
        lag = str(link.get("interfaceMembership", "")).removeprefix("Member of ")
        if name not in ports and lag in ports:
            ports[name] = ports[lag]
    up = {name: link.get("lineProtocolStatus") == "up" for name, link in links.items()}
    return L2State(frozenset(int(v) for v in vlans), ports, up)


def l2_state(links_json: str, vlans_json: str) -> L2State:
    """Parse ``ip -j link show`` and ``bridge -j vlan show``; a LAG member carries its LAG's VLANs.

    Example:
        >>> links = '[{"ifname": "swp1", "operstate": "UP", "master": "peerlink"}, {"ifname": "peerlink", "operstate": "UP"}]'
        >>> state = l2_state(links, '[{"ifname": "peerlink", "vlans": [{"vlan": 101}, {"vlan": 102}]}]')
        >>> sorted(state.ports["swp1"]), sorted(state.vlans), state.up["peerlink"]
        ([101, 102], [101, 102], True)
    """
    links = json.loads(links_json or "[]")
    carried = {str(e["ifname"]): frozenset(int(v["vlan"]) for v in e.get("vlans", [])) for e in json.loads(vlans_json or "[]")}
    ports = dict(carried)
    for link in links:
        name, master = str(link["ifname"]), str(link.get("master", ""))
        if name not in ports and master in carried:
            ports[name] = carried[master]
    up = {str(link["ifname"]): link.get("operstate") in {"UP", "UNKNOWN"} for link in links}
    every = frozenset(v for vlans in carried.values() for v in vlans)
    return L2State(every, ports, up)


def l2_problems(expect: L2Expect, now: L2State, before: L2State | None = None) -> list[str]:
    """VLANs missing from the bridge, planned ports without their VLANs, and ports, LAGs or (``expect.vpc``) vPC state
    up before and down now; without ``before`` (``verify``), a vPC pair's state down or missing.

    Example:
        >>> expect = L2Expect(((101, "storage"), (102, "inband")), (("swp1", (101,), "node1 storage"),))
        >>> now = L2State(frozenset({102}), {"swp1": frozenset()}, {"swp1": True})
        >>> l2_problems(expect, now)
        ['VLAN 101 (storage) is not on the bridge', 'swp1 (node1 storage): VLAN 101 not on it']
    """
    problems = [f"VLAN {vlan} ({plane}) is not on the bridge" for vlan, plane in expect.vlans if vlan not in now.vlans]
    for port, vlans, what in expect.ports:
        if port not in now.ports and port not in now.up:
            continue  # a port the switch does not have
        missing = [v for v in vlans if v not in now.ports.get(port, frozenset())]
        if missing:
            problems.append(f"{port} ({what}): VLAN {', '.join(map(str, missing))} not on it")
    vpc = {k: is_up for k, is_up in now.up.items() if k.startswith(VPC_PREFIX)} if expect.vpc else {}
    if before is None and expect.vpc:  # verify: the pair must be formed, whatever it was
        problems += [f"{k} is down" for k, is_up in sorted(vpc.items()) if not is_up] if vpc else ["no vPC state: is feature vpc on?"]
    if before is not None:
        watched = [(p, what) for p, _, what in expect.ports] + [(lag, "LAG") for lag in expect.lags]
        problems += [f"{p} ({what}) is down after the change" for p, what in watched if before.up.get(p) and not now.up.get(p)]
        if expect.vpc:
            was = sorted(k for k, was_up in before.up.items() if k.startswith(VPC_PREFIX) and was_up)
            problems += [f"{k} is down after the change" for k in was if not vpc.get(k)]
    return problems


def l2_post_check(nos: str, expect: L2Expect, before: L2State, *, timeout_s: float, hold_s: float, waiting: Waiting | None) -> PostCheck:
    """The post-check of one L2 switch: clean (``l2_problems``) for ``hold_s`` within ``timeout_s``."""

    def sample(session: Session) -> list[str]:
        try:
            return l2_problems(expect, read_l2(nos, session, vpc=expect.vpc), before)
        except NxosReplyError as exc:  # a reply it cannot trust: a problem like any other (waited on, then reverted)
            return [f"unreadable reply: {exc}"]

    return lambda session: hold_clean(lambda: sample(session), timeout_s=timeout_s, hold_s=hold_s, waiting=waiting, what="L2 post-check")
