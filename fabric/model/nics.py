"""The NIC side of the RoCE contract: which NIC model each node group's compute ports carry, what each sends on the
wire, and the contract's CNP marking derived from them.

Per marking field (RoCE DSCP and priority, CNP DSCP and priority) the rule is:

- the definition names the value (``roce.dscp``, ``roce.priority``, ``roce.cnp.dscp``, ``roce.cnp.priority``), or, for
  the two CNP fields only, leaves it out and every RoCE NIC model of the cluster documents the same default: then the
  contract takes the NICs' own value (an all-Thor2 fabric keeps Broadcom's CNP priority 7, and its CNP traffic class
  follows unless given; nothing is reprogrammed). Mixed NICs that disagree keep the contract's defaults (48 / 6);
- a NIC whose default differs from the contract, or is not documented, is **set** by ``roles/nic_qos`` where the
  catalog lists the field as ``settable`` (mlx5: mlnx_qos, sysfs, cma_roce_tos; bnxt_re: configfs);
- otherwise the definition is **refused**, naming the NIC model, the node group and the field: the switches classify
  one RoCE DSCP into the lossless class and one CNP DSCP into the CNP class, so a NIC sending anything else breaks the
  fabric for every node, and a value nobody documented cannot be checked.

A group whose compute ports name no NIC model (a generic profile) keeps today's behaviour: the ConnectX path of
``roles/nic_qos`` with the contract's values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fabric.catalog.hardware import HardwareProfile
from fabric.catalog.nic_model import CONTRACT_FIELD, MARKING_FIELDS, MarkingField, NicModel
from fabric.catalog.nics import NIC_MODELS, VENDOR_NAME
from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.nodes import NodeGroupSpec
from fabric.model.qos import RoceSpec

LABEL: dict[MarkingField, str] = {"roce_dscp": "RoCE DSCP", "roce_priority": "RoCE priority", "cnp_dscp": "CNP DSCP", "cnp_priority": "CNP priority"}


@dataclass(frozen=True, slots=True)
class GroupNic:
    """One node group's compute NIC model."""

    index: int
    group: NodeGroupSpec
    model: NicModel

    @property
    def title(self) -> str:
        """``Broadcom thor2``: the vendor and the catalog name."""
        return f"{VENDOR_NAME[self.model.vendor]} {self.model.name}"


def is_connectx(profile: HardwareProfile | None) -> bool:
    """Whether a profile's compute NIC takes the ConnectX path (an NVIDIA model, or one the profile does not name).

    Example:
        >>> from fabric.catalog.hardware import HARDWARE
        >>> is_connectx(HARDWARE["dgx-h100"]), is_connectx(HARDWARE["lab-node"])
        (True, True)
    """
    port = profile.ports.get("compute") if profile is not None else None
    model = NIC_MODELS.get(port.nic) if port is not None and port.nic is not None else None
    return model is None or model.tool == "mlnx"


def roce_nics(spec: ClusterSpec) -> list[GroupNic]:
    """The groups with RoCE compute ports whose NIC model is known, in definition order (none off a RoCE fabric)."""
    if spec.target != "onprem" or spec.planes.compute.transport != "roce":
        return []
    found: list[GroupNic] = []
    for index, group in enumerate(spec.nodes):
        profile = spec.profile_of(group)
        port = profile.ports.get("compute") if profile is not None else None
        if port is not None and port.nic is not None and port.nic in NIC_MODELS:
            found.append(GroupNic(index, group, NIC_MODELS[port.nic]))
    return found


def contract_roce(spec: ClusterSpec) -> RoceSpec:
    """The definition's ``roce`` with the CNP DSCP and priority it leaves out taken from the NICs, where they all agree.

    Example:
        >>> from fabric.model import load_cluster
        >>> contract_roce(load_cluster("inventories/onprem-roce/cluster.yaml")).cnp.priority
        6
    """
    roce = spec.roce
    given = roce.cnp.model_fields_set if "cnp" in roce.model_fields_set else set[str]()
    update: dict[str, int] = {}
    models = [g.model for g in roce_nics(spec)]
    for field, key in (("cnp_dscp", "dscp"), ("cnp_priority", "priority")):
        values = {getattr(m.defaults, field) for m in models}
        if key not in given and len(values) == 1 and (value := values.pop()) is not None and value != getattr(roce.cnp, key):
            update[key] = value
    if "priority" in update and "traffic_class" not in given:
        update["traffic_class"] = update["priority"]  # the CNP queue follows its priority (SONiC schedules by TC = priority)
    if not update:
        return roce
    return roce.model_copy(update={"cnp": roce.cnp.model_copy(update=update)})


def contract_value(roce: RoceSpec, field: MarkingField) -> int:
    """The contract's value of one marking field."""
    return {"roce_dscp": roce.dscp, "roce_priority": roce.priority, "cnp_dscp": roce.cnp.dscp, "cnp_priority": roce.cnp.priority}[field]


def fields_to_set(model: NicModel, roce: RoceSpec) -> tuple[MarkingField, ...]:
    """The marking fields the node roles must set on this NIC: settable, and not already the contract's out of the box."""
    return tuple(f for f in MARKING_FIELDS if f in model.settable and getattr(model.defaults, f) != contract_value(roce, f))


def check_nic_marking(spec: ClusterSpec) -> Iterator[Finding]:
    """Every RoCE NIC either sends the contract's marking out of the box or can be set to it; else a finding per field."""
    roce = contract_roce(spec)
    for nic in roce_nics(spec):
        where = ("nodes", nic.index, "nic" if nic.group.nic is not None else "hardware")
        for field in MARKING_FIELDS:
            if field in nic.model.settable:
                continue
            want, has = contract_value(roce, field), getattr(nic.model.defaults, field)
            if has == want:
                continue
            label = LABEL[field]
            sends = f"a {label} no cited document gives" if has is None else f"{label} {has}"
            fix = f"set {CONTRACT_FIELD[field]}: {has}" if has is not None else "cite the NIC's value in its catalog file"
            yield Finding(
                where,
                f"group '{nic.group.group}': the {nic.title} NIC sends {sends} and gpufabric cannot set it "
                f"(fabric/catalog/data/nics/{nic.model.name}.yaml: not settable), but the contract's {CONTRACT_FIELD[field]} is {want}; "
                f"the switches would classify its packets wrongly. Fix: {fix}, or give the group a NIC gpufabric can set",
            )
