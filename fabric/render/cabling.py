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
from itertools import repeat

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
    planes = plan.fabric is not None and any(plane_of(s.name) for s in plan.fabric.spines + plan.fabric.leaves)
    header = (*COLUMNS, "fabric_plane") if planes else COLUMNS
    cables: list[Cable] = [
        *(plan.fabric.links if plan.fabric else ()),
        *(plan.oob.links if plan.oob else ()),  # kind bmc | switch-mgmt | uplink; an uplink's core port is site-specific (empty)
        *(x for net in plan.storage for x in net.links),  # kind storage | inband | peerlink | uplink
    ]
    where = {device: (rack, str(unit)) for device, rack, unit in plan.positions}
    text = _joined(header, cables, where, planes=planes)
    if _plain(text, rows=len(cables) + 1, columns=len(header)):
        return text
    return _written(header, cables, where, planes=planes)


def _joined(header: tuple[str, ...], cables: list[Cable], where: dict[str, tuple[str, str]], *, planes: bool) -> str:
    """The rows joined by commas, every field as ``str()`` gives it: what ``csv`` writes when no field needs quoting and
    none is None (``_plain`` checks both on the result)."""
    place = {device: f"{rack!s},{unit!s}" for device, (rack, unit) in where.items()}  # two fields: rack, u
    tail: Iterable[str] = repeat("")
    if planes:  # one more field: the compute cable's plane (p1, p2, ...), else empty
        plane = {a: f",p{k}" if (k := plane_of(a)) else "," for a in {x.a_device for x in cables}}
        tail = [plane[x.a_device] if isinstance(x, Link) else "," for x in cables]
    lines = [",".join(header)]
    lines += [
        f"{x.a_device!s},{x.a_port!s},{x.b_device!s},{x.b_port!s},{x.speed_gbps!s},{x.cable_m!s},{x.plane!s},{x.kind!s},"
        f"{place.get(x.a_device, ',') if place else ','},{place.get(x.b_device, ',') if place else ','}{end}"
        for x, end in zip(cables, tail, strict=False)  # tail: as long as cables, or endless
    ]
    lines.append("")
    return "\n".join(lines)


def _plain(text: str, *, rows: int, columns: int) -> bool:
    """Whether ``csv`` (QUOTE_MINIMAL, ``\\n`` line ends) writes ``text`` as it is: no field held a comma, a quote or a
    line break (the separators count exactly ``rows`` lines of ``columns`` fields), and none was None (``csv`` writes
    it empty, ``str()`` as ``None``). A device or port named like ``None`` takes the slow path, to the same bytes."""
    return text.count("\n") == rows and text.count(",") == rows * (columns - 1) and '"' not in text and "\r" not in text and "None" not in text


def _written(header: tuple[str, ...], cables: list[Cable], where: dict[str, tuple[str, str]], *, planes: bool) -> str:
    """The same rows through ``csv.writer``, which quotes what needs it: for the plans ``_plain`` turns down."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    nowhere = ("", "")
    for x in cables:
        ends = (*where.get(x.a_device, nowhere), *where.get(x.b_device, nowhere))
        row = (x.a_device, x.a_port, x.b_device, x.b_port, x.speed_gbps, x.cable_m, x.plane, x.kind, *ends)
        if planes:
            plane = plane_of(x.a_device) if isinstance(x, Link) else None
            row = (*row, f"p{plane}" if plane else "")
        writer.writerow(row)
    return out.getvalue()
