"""The cluster definition: the single source of truth for a GPU cluster and its networks."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, model_validator

from fabric.catalog.hardware import HardwareProfile, to_profile
from fabric.catalog.node_model import NodeProfileBody
from fabric.model.access import SwitchAccessSpec
from fabric.model.base import Name, SpecModel
from fabric.model.deferred import Deferred
from fabric.model.infiniband import InfinibandSpec
from fabric.model.nodes import NodeGroupSpec
from fabric.model.planes import PlanesSpec
from fabric.model.qos import RoceSpec
from fabric.model.strings import Description
from fabric.model.topology import FabricSpec

if TYPE_CHECKING:
    from fabric.model.cloud import AwsSpec, AzureSpec, GcpSpec
else:  # the cloud models are built only when a definition has a cloud block (fabric/model/deferred.py)
    AwsSpec = Annotated[object, Deferred("fabric.model.cloud", "AwsSpec")]
    GcpSpec = Annotated[object, Deferred("fabric.model.cloud", "GcpSpec")]
    AzureSpec = Annotated[object, Deferred("fabric.model.cloud", "AzureSpec")]

Target = Literal["onprem", "aws", "gcp", "azure"]
# Bounds on the whole definition, so no stage ever works on more than a real cluster (see fabric/model/nodes.py).
MAX_GROUPS = 256
MAX_NODES = 32768
PROFILE_NAME_RE = r"^[a-z0-9][a-z0-9-]{0,62}$"
RackUnit = Annotated[int, Field(ge=1, le=64, description="The device's lowest rack unit, 1 at the bottom.")]


class ClusterSpec(SpecModel):
    """A GPU cluster: where it runs, its four planes, its compute fabric and its nodes."""

    name: Name
    target: Target
    description: Description = ""
    aws: AwsSpec | None = Field(default=None, description="Required when target is aws.")
    gcp: GcpSpec | None = Field(default=None, description="Required when target is gcp.")
    azure: AzureSpec | None = Field(default=None, description="Required when target is azure.")
    planes: PlanesSpec
    fabric: FabricSpec | None = Field(default=None, description="On-prem compute fabric; required when target is onprem.")
    roce: RoceSpec = Field(default_factory=RoceSpec, description="RoCE lossless contract (used with transport roce).")
    infiniband: InfinibandSpec | None = Field(default=None, description="Required with transport infiniband.")
    switches: SwitchAccessSpec = Field(default_factory=SwitchAccessSpec)
    hardware: dict[Annotated[str, Field(pattern=PROFILE_NAME_RE)], NodeProfileBody] = Field(
        default_factory=dict[str, NodeProfileBody],
        max_length=64,
        description="The definition's own node hardware profiles, by name, next to the built-in ones (same schema as "
        "fabric/catalog/data/nodes/*.yaml without 'name'); a node group names one in 'hardware'.",
    )
    nodes: tuple[NodeGroupSpec, ...] = Field(min_length=1, max_length=MAX_GROUPS)
    racks: dict[Name, Annotated[dict[Name, RackUnit], Field(max_length=128)]] = Field(  # 64 U, two half-width devices a U
        default_factory=dict[str, dict[str, int]],
        max_length=4096,
        description="Where devices sit: rack name -> {device name: its lowest rack unit (U)}. cabling.csv gives each cable "
        "end's rack and U from it (empty for a device not listed); a device the plan does not have is an error.",
    )

    @cached_property
    def hardware_profiles(self) -> dict[str, HardwareProfile]:
        """The definition's own profiles in the planner's form."""
        return {name: to_profile(body, name) for name, body in self.hardware.items()}

    def profile_of(self, group: NodeGroupSpec) -> HardwareProfile | None:
        """A group's hardware, its own profiles and ports included (None on cloud groups)."""
        return group.hardware_profile(self.hardware_profiles)

    @model_validator(mode="after")
    def _one_rack_per_device(self) -> ClusterSpec:
        seen: dict[str, str] = {}
        for rack, devices in self.racks.items():
            for device in devices:
                if device in seen:
                    msg = f"racks: '{device}' is placed in rack '{seen[device]}' and in rack '{rack}'; a device sits in one rack"
                    raise ValueError(msg)
                seen[device] = rack
        return self

    @model_validator(mode="after")
    def _bounded(self) -> ClusterSpec:
        total = sum(group.count for group in self.nodes)
        if total > MAX_NODES:
            msg = f"the definition has {total} nodes in all; at most {MAX_NODES} are supported, split the cluster into several definitions"
            raise ValueError(msg)
        return self
