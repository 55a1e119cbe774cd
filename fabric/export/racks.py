"""Which rack each node sits in, when the definition places its OOB switches per rack (pure: plan → names).

The definition knows racks only through ``planes.oob.network.placement: rack`` (``nodes_per_rack`` node slots per
rack, one management switch ``oob-su<s>-r<r>`` each, the SuperPOD way): a node's rack is the location of the switch
that takes its BMC (``fabric.plan.oob.build``). Under ``placement: su`` (or without an OOB network) the plan has no racks
and no rack is named.
"""

from __future__ import annotations

import re

from fabric.plan.types import ClusterPlan

_RACK = re.compile(r"su(\d+)-r(\d+)")


def node_racks(plan: ClusterPlan) -> dict[str, str]:
    """Hostname → rack (``su<SU>-r<rack>``, two digits each) for every node whose BMC is cabled to a rack's OOB switch.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> racks = node_racks(plan_cluster(load_cluster("inventories/onprem-ib/cluster.yaml")))
        >>> racks["dgx01"], racks["dgx04"], racks["dgx05"]
        ('su01-r01', 'su01-r01', 'su01-r02')
    """
    oob = plan.oob
    if oob is None or oob.placement != "rack":
        return {}
    location = {s.name: s.location for s in oob.switches}
    racks: dict[str, str] = {}
    for link in oob.links:
        match = _RACK.fullmatch(location.get(link.a_device, "")) if link.kind == "bmc" else None
        if match is not None:
            racks[link.b_device] = f"su{int(match.group(1)):02d}-r{int(match.group(2)):02d}"
    return dict(sorted(racks.items()))
