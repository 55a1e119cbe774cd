"""Which switches a push reaches, plane by plane, and in what order.

Every plane's switches go through the same transaction (``fabric.apply.rollout``); this module only says which ones
and when. The push order is fixed, whatever order ``--plane`` names them in:

1. ``oob`` first, one switch at a time: the OOB switches carry the management path itself (every other switch's
   management port and every BMC hangs off them). Pushing them first means no storage or compute switch has a change
   in flight while the management network changes under it, and every later device's own transaction (its read, its
   fresh-login check before confirming, its revert) then runs over the changed management network, proving it again.
   Within the plane the switches that carry only BMCs and devices go first, then the others by how many switches'
   management ports they carry (fewest first), so a management-path break shows up where it costs the least. Each
   switch is confirmed only after a fresh SSH login to it succeeds (through the management network it just changed).
2. ``storage``, then ``inband``: L2 MLAG pairs. Side ``a`` of every pair goes before side ``b`` (a batch never holds
   both switches of a pair, so a dual-homed host always keeps one side), the first switch alone as the canary.
3. ``compute`` last, as before (canary per tier, then batches).

A converged network (the SuperPOD way: storage and in-band on one fabric) belongs to every plane it carries, and is
pushed once, in the first of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fabric.errors import Finding, InputError
from fabric.plan.types import ClusterPlan

PLANES = ("oob", "storage", "inband", "compute")
"""Every plane with switches, in push order (see the module docstring for why)."""


@dataclass(frozen=True, slots=True)
class PlaneDevice:
    """One switch a push can reach.

    Attributes:
        plane: the plane it is pushed with (``oob``, ``storage``, ``inband``, ``compute``).
        planes: every plane it carries (a converged storage network: ``("storage", "inband")``).
        config_dir: where its rendered files are in ``render_configs`` output (``switches/<name>/``).
        group: what orders it inside its plane: the tier (compute), ``a``/``b`` (an MLAG pair), ``access``/``mgmt`` (OOB).
    """

    name: str
    plane: str
    planes: tuple[str, ...]
    nos: str
    mgmt_address: str
    group: str

    @property
    def config_dir(self) -> str:
        """The prefix of its rendered files."""
        return f"switches/{self.name}/"

    @property
    def is_l2(self) -> bool:
        """True for the L2 planes' switches (post-checked on VLANs and ports, not on BGP and routes)."""
        return self.plane != "compute"


def plane_devices(plan: ClusterPlan) -> dict[str, tuple[PlaneDevice, ...]]:
    """Plane → its switches with NOS, management address and rendered config, in push order inside the plane.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> devices = plane_devices(plan_cluster(load_cluster("inventories/lab/cluster.yaml")))
        >>> {plane: [d.name for d in found] for plane, found in devices.items()}  # doctest: +NORMALIZE_WHITESPACE
        {'oob': ['oob-su1', 'oob-su2', 'oob-su3', 'oob-su4', 'oob-mgmt'], 'storage': ['stor-a', 'stor-b'],
         'inband': ['stor-a', 'stor-b'], 'compute': ['spine01', 'spine02', 'leaf01', 'leaf02']}
    """
    out: dict[str, list[PlaneDevice]] = {plane: [] for plane in PLANES}
    if plan.oob is not None:
        managed = Counter(x.a_device for x in plan.oob.links if x.kind == "switch-mgmt")
        for s in sorted(plan.oob.switches, key=lambda s: managed[s.name]):  # stable: plan order among equals
            out["oob"].append(PlaneDevice(s.name, "oob", ("oob",), s.nos, s.mgmt_address, "mgmt" if managed[s.name] else "access"))
    for net in plan.storage:
        carried = tuple(p for p in PLANES if p in net.planes or p == net.name)
        for s in sorted(net.switches, key=lambda s: (s.side == "b", s.role != "spine")):
            device = PlaneDevice(s.name, carried[0], carried, s.nos, s.mgmt_address, s.side or "a")
            for plane in carried:
                out[plane].append(device)
    if plan.fabric is not None:
        out["compute"] = [PlaneDevice(s.name, "compute", ("compute",), s.nos, s.mgmt_address, s.tier) for s in plan.fabric.switches]
    return {plane: tuple(found) for plane, found in out.items()}


def parse_planes(values: Iterable[str] | None) -> tuple[str, ...]:
    """The planes ``--plane`` selects (repeatable, or a comma list), in push order; every plane when none is given.

    Raises:
        InputError: a value that names no plane.

    Example:
        >>> parse_planes(["compute,storage", "oob"])
        ('oob', 'storage', 'compute')
        >>> parse_planes(["sorage"])
        Traceback (most recent call last):
        fabric.errors.InputError: command line: 1 error(s)
        command line: error: --plane: 'sorage' is not a plane; choose from oob, storage, inband, compute (repeat --plane or give a comma list)
    """
    given = [v.strip() for value in values or () for v in value.split(",") if v.strip()]
    bad = [v for v in given if v not in PLANES]
    if bad:
        names = ", ".join(repr(v) for v in bad)
        what = "is not a plane" if len(bad) == 1 else "are not planes"
        msg = f"{names} {what}; choose from {', '.join(PLANES)} (repeat --plane or give a comma list)"
        raise InputError([Finding(("--plane",), msg, file="command line")], "command line")
    return tuple(p for p in PLANES if p in given) if given else PLANES


def select_devices(plan: ClusterPlan, planes: Sequence[str] = PLANES) -> list[PlaneDevice]:
    """The switches of ``planes``, each once, in push order (a converged switch with the first plane that selects it)."""
    seen: set[str] = set()
    out: list[PlaneDevice] = []
    for plane, devices in plane_devices(plan).items():
        if plane not in planes:
            continue
        for device in devices:
            if device.name not in seen:
                seen.add(device.name)
                out.append(device)
    return out


def plane_batches(devices: Sequence[PlaneDevice], parallel: int, compute: list[list[str]]) -> list[list[str]]:
    """The rollout order: OOB one switch at a time; each L2 plane's first switch alone (its canary), then side ``a``
    and side ``b`` of the pairs in separate batches of ``parallel``; ``compute`` (the compute fabric's own canaries
    and batches, ``fabric.apply.rollout.batches``) last.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> plan = plan_cluster(load_cluster("inventories/lab/cluster.yaml"))
        >>> plane_batches(select_devices(plan, ("oob", "storage")), 4, [])
        [['oob-su1'], ['oob-su2'], ['oob-su3'], ['oob-su4'], ['oob-mgmt'], ['stor-a'], ['stor-b']]
    """
    out: list[list[str]] = []
    for plane in PLANES[:-1]:
        mine = [d for d in devices if d.plane == plane]
        if not mine:
            continue
        if plane == "oob":
            out += [[d.name] for d in mine]
            continue
        out.append([mine[0].name])
        for side in ("a", "b"):
            rest = [d.name for d in mine[1:] if (d.group == "b") == (side == "b")]
            out += [rest[i : i + parallel] for i in range(0, len(rest), parallel)]
    names = {d.name for d in devices if d.plane == "compute"}
    return out + [[n for n in batch if n in names] for batch in compute if any(n in names for n in batch)]
