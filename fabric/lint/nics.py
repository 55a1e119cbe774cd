"""The NIC half of the lint: every switch classifies what the NICs cabled to it send (issue 34).

For each host port of a switch, the plan knows the node, its RDMA device and its group's NIC model, and what that NIC
sends once the node roles ran (``ClusterPlan.nics``): the RoCE DSCP and priority, the CNP DSCP and priority. A
switch config (rendered or hand-edited) that puts one of those DSCPs in another class, or on another priority, than
the NIC uses is a finding naming the switch port, the node, the RDMA device and the NIC model. One finding per
switch, kind and NIC model: the first port, and how many more ports of that model the same disagreement hits.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fabric.catalog.nics import VENDOR_NAME
from fabric.lint.parse.qos import SwitchQos
from fabric.model.qos import RoceSpec
from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.types import ClusterPlan, NicPlan


@dataclass(frozen=True, slots=True)
class _Miss:
    where: str
    expected: str
    actual: str
    message: str


def nic_findings(plan: ClusterPlan, fact: SwitchFacts, qos: SwitchQos, roce: RoceSpec) -> Iterator[tuple[str, str, str, str]]:
    """(where, expected, actual, message) for each way this switch disagrees with the NICs cabled to it.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.lint.parse.qos import SwitchQos
        >>> from fabric.plan.compute.facts import build_switch_facts
        >>> plan = plan_cluster(load_cluster("tests/data/render/thor2-eos/cluster.yaml"))
        >>> leaf = next(f for f in build_switch_facts(plan) if f.switch.name == "leaf01")
        >>> qos = SwitchQos("leaf01", "eos", dscp_to_tc={26: 3, 48: 7}, dscp_to_priority={26: 3, 48: 6})
        >>> [w for w, *_ in nic_findings(plan, leaf, qos, plan.roce)]
        ['port Ethernet1/1 (amd01 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC']
    """
    nodes = {n.hostname: n for n in plan.nodes}
    seen: dict[tuple[str, str], list[_Miss]] = {}
    for port in fact.ports:
        node = nodes.get(port.peer) if port.kind == "host" else None
        nic = plan.nic_of(node) if node is not None else None
        if node is None or nic is None:
            continue
        hca = next((i.hca for i in node.interfaces if i.name == port.peer_port and i.hca), port.peer_port)
        where = f"port {port.name} ({node.hostname} {hca}, {VENDOR_NAME.get(nic.vendor, nic.vendor)} {nic.model})"
        for kind, miss in _misses(where, nic, qos, roce):
            seen.setdefault((kind, nic.model), []).append(miss)
    for misses in seen.values():
        first, more = misses[0], len(misses) - 1
        where = first.where + (f" and {more} more port{'s' if more > 1 else ''} of that NIC" if more else "")
        yield where, first.expected, first.actual, first.message


def _misses(where: str, nic: NicPlan, qos: SwitchQos, roce: RoceSpec) -> Iterator[tuple[str, _Miss]]:
    for what, dscp, prio, tc, role in (
        ("RoCE", nic.roce_dscp, nic.roce_priority, roce.traffic_class, "the lossless"),
        ("CNP", nic.cnp_dscp, nic.cnp_priority, roce.cnp.traffic_class, "the CNP"),
    ):
        got = qos.dscp_to_tc.get(dscp)
        if got != tc:  # the class decides; its priority is checked once the class is right
            found = "unmapped" if got is None else f"traffic-class {got}"
            yield (
                f"{what}-class",
                _Miss(
                    where,
                    f"dscp {dscp} in traffic-class {tc}",
                    f"dscp {dscp} {'in ' if got is not None else ''}{found}",
                    f"the NIC sends {what} with DSCP {dscp}; the switch must put it in {role} traffic class {tc}, it puts it in {found}",
                ),
            )
            continue
        switch_prio = qos.dscp_to_priority.get(dscp)
        if switch_prio is not None and switch_prio != prio:
            verb = "prioritises CNP" if what == "CNP" else "puts RoCE"
            yield (
                f"{what}-priority",
                _Miss(
                    where,
                    f"dscp {dscp} on priority {prio}",
                    f"dscp {dscp} on priority {switch_prio}",
                    f"the switch {verb} on priority {switch_prio}, the NIC sends {what} with DSCP {dscp} → priority {prio}",
                ),
            )
