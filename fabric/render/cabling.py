"""The cabling plan as CSV: one row per cable, in plan order."""

from __future__ import annotations

import csv
import io

from fabric.plan.types import ClusterPlan

COLUMNS = ("device", "port", "peer_device", "peer_port", "speed_gbps", "cable_m", "plane", "kind")


def render_cabling(plan: ClusterPlan) -> str:
    """CSV text with a header row; empty body for clusters without an on-prem fabric.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> render_cabling(plan_cluster(load_cluster("inventories/lab/cluster.yaml"))).splitlines()[1]
        'leaf01,swp1,node1,eth1,100,5,compute,host'
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    links = plan.fabric.links if plan.fabric else ()
    writer.writerows((x.a_device, x.a_port, x.b_device, x.b_port, x.speed_gbps, x.cable_m, x.plane, x.kind) for x in links)
    oob = plan.oob.links if plan.oob else ()  # kind bmc | switch-mgmt | uplink; an uplink's core port is site-specific (empty)
    writer.writerows((x.a_device, x.a_port, x.b_device, x.b_port, x.speed_gbps, x.cable_m, x.plane, x.kind) for x in oob)
    storage = (x for net in plan.storage for x in net.links)  # kind storage | inband | peerlink | uplink
    writer.writerows((x.a_device, x.a_port, x.b_device, x.b_port, x.speed_gbps, x.cable_m, x.plane, x.kind) for x in storage)
    return out.getvalue()
