"""The cabling plan as CSV: one row per cable, in plan order (compute fabric, OOB, storage / in-band).

Columns, in this order (docs/definition/racks.md): ``device, port, peer_device, peer_port, speed_gbps, cable_m, plane, kind,
rack, u, peer_rack, peer_u``; the last four come from the definition's ``racks`` and are empty for a device it does not
place. A multi-plane compute fabric (``fabric.planes`` > 1) adds ``fabric_plane``: ``p1``, ``p2``, ... on each compute
cable (both ends are in that plane: no cable joins two), empty on OOB and storage cables; a one-plane fabric's file has
no such column.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from fabric.plan.compute.planes import plane_of
from fabric.plan.oob.types import OobLink
from fabric.plan.storage.types import StorageLink
from fabric.plan.types import ClusterPlan, Link

COLUMNS = ("device", "port", "peer_device", "peer_port", "speed_gbps", "cable_m", "plane", "kind", "rack", "u", "peer_rack", "peer_u")


Cable = Link | OobLink | StorageLink


def render_cabling(plan: ClusterPlan) -> str:
    """CSV text with a header row; empty body for clusters without an on-prem fabric.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> render_cabling(plan_cluster(load_cluster("inventories/lab/cluster.yaml"))).splitlines()[1]
        'leaf01,swp1,node1,eth1,100,5,compute,host,,,,'
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    planes = plan.fabric is not None and any(plane_of(s.name) for s in plan.fabric.spines + plan.fabric.leaves)
    writer.writerow((*COLUMNS, "fabric_plane") if planes else COLUMNS)
    where = {device: (rack, str(unit)) for device, rack, unit in plan.positions}
    cables: tuple[Iterable[Cable], ...] = (
        plan.fabric.links if plan.fabric else (),
        plan.oob.links if plan.oob else (),  # kind bmc | switch-mgmt | uplink; an uplink's core port is site-specific (empty)
        (x for net in plan.storage for x in net.links),  # kind storage | inband | peerlink | uplink
    )
    nowhere = ("", "")
    for links in cables:
        for x in links:
            ends = (*where.get(x.a_device, nowhere), *where.get(x.b_device, nowhere))
            row = (x.a_device, x.a_port, x.b_device, x.b_port, x.speed_gbps, x.cable_m, x.plane, x.kind, *ends)
            if planes:
                plane = plane_of(x.a_device) if isinstance(x, Link) else None
                row = (*row, f"p{plane}" if plane else "")
            writer.writerow(row)
    return out.getvalue()
