"""On-prem compute fabric topology: tiers, switch models, oversubscription, scalable units, underlay pools."""

from __future__ import annotations

from fractions import Fraction
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from fabric.catalog.releases import NOS_RELEASES, default_release
from fabric.catalog.switch_refused import REFUSED_SWITCH_MODELS, UNRENDERED_NOS
from fabric.catalog.switches import SWITCH_MODELS, Nos
from fabric.errors import Finding
from fabric.model.base import Asn, SpecModel, unknown_choice
from fabric.model.load_balancing import LoadBalancingSpec
from fabric.model.strings import CatalogKey, DomainName

# A NOS release train as NOS_RELEASES spells it: 5.14, 4.33, 10.4, 202411 (which releases are supported is a rule's job).
RELEASE_RE = r"^\d{1,8}(\.\d{1,4}){0,3}$"
OVERSUBSCRIPTION_RE = r"^\d{1,3}(\.\d{1,3})?:\d{1,3}(\.\d{1,3})?$"
Oversubscription = Annotated[str, Field(pattern=OVERSUBSCRIPTION_RE, description="Downlink:uplink bandwidth, e.g. '1:1' or '3:1'.")]
# The largest logical radix in the switch catalog (64 cages x 4-way breakout); no per-leaf or spine count can exceed it.
MAX_RADIX = 256
# Offsets into address pools: a /16 holds 65,536 addresses.
MAX_OFFSET = 65535
# Oversubscription targets outside 1:4 .. 64:1 describe no real fabric (and would ask the planner for absurd uplink counts).
RATIO_MIN, RATIO_MAX = Fraction(1, 4), Fraction(64)
MAX_PLANES = 4  # the designs the issue names: twin-planar SuperPOD B300, dual-plane HPN; 4 for a 4-port NIC split by port
PlaneSplit = Literal["port", "nic"]
PlaneSpines = Literal["separate", "shared"]
JUMBO_MTU = 9216  # the Ethernet jumbo limit the schema allows; used where the catalog records no NOS limit


def parse_ratio(text: str) -> Fraction:
    """Parse ``"3:1"`` into ``Fraction(3, 1)``.

    Example:
        >>> parse_ratio("1.5:1")
        Fraction(3, 2)
    """
    down, up = text.split(":")
    return Fraction(down) / Fraction(up)


def check_ratio(text: str) -> str:
    """``text`` when it is a usable oversubscription target.

    Raises:
        ValueError: a side is zero, or the ratio is outside 1:4 .. 64:1.
    """
    down, up = (Fraction(side) for side in text.split(":"))
    if down == 0 or up == 0:
        msg = f"oversubscription {text!r} has a zero side; both downlink and uplink bandwidth must be positive, e.g. '1:1' or '3:1'"
        raise ValueError(msg)
    if not RATIO_MIN <= down / up <= RATIO_MAX:
        msg = f"oversubscription {text!r} is outside 1:4 .. 64:1; no two-tier fabric is built like that, use e.g. '1:1' or '3:1'"
        raise ValueError(msg)
    return text


def _quoted_release(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool):
        msg = f'write the release as a quoted string, e.g. nos_version: "{value}" (YAML reads 5.10 as the number 5.1)'
        raise ValueError(msg)
    return value


Release = Annotated[str, BeforeValidator(_quoted_release), Field(pattern=RELEASE_RE)]
"""A ``nos_version`` of a storage, in-band or OOB tier (the compute tiers' own field says the same)."""

INHERITED_RELEASE = (
    "NOS release of these switches; the renderers emit its syntax (supported: as fabric.leaf.nos_version). Default: the "
    "compute leaf tier's release when that tier runs the same NOS, else the NOS's default. Quote it: YAML reads 5.10 as 5.1."
)


def tier_release(nos: str, nos_version: str | None, fabric: FabricSpec | None) -> str:
    """The release a storage, in-band or OOB tier runs: its own ``nos_version``, else the compute leaf tier's release
    when the leaves run the same NOS (one image across a site's switches of that NOS), else the NOS's default.

    Example:
        >>> tier_release("cumulus", None, None), tier_release("cumulus", "5.15", None)
        ('5.14', '5.15')
    """
    if nos_version is not None:
        return nos_version
    if fabric is not None and fabric.leaf.nos == nos:
        return fabric.leaf.release
    return default_release(nos)


def unsupported_release(path: tuple[str | int, ...], nos: str, nos_version: str | None) -> list[Finding]:
    """A finding at ``path`` when ``nos_version`` is given and is not a release the renderers support for ``nos``."""
    releases = NOS_RELEASES[nos]
    if nos_version is None or nos_version in releases.supported:
        return []
    msg = (
        f"{nos} release '{nos_version}' is not supported; supported: {', '.join(releases.supported)} "
        f"(default {releases.default}); pick one or leave nos_version out"
    )
    return [Finding(path, msg)]


class TierSpec(SpecModel):
    """A switch tier: one model, one NOS and one NOS release for every switch in it."""

    model: CatalogKey = Field(description="Switch model from the catalog: one file per model in fabric/catalog/data/switches/.")
    nos: Nos
    nos_version: Annotated[str, Field(pattern=RELEASE_RE)] | None = Field(
        default=None,
        description="NOS release the tier runs; the renderers emit its syntax. Supported (default in brackets): "
        + "; ".join(f"{nos} {', '.join(r.supported)} [{r.default}]" for nos, r in NOS_RELEASES.items())
        + ". Quote it: YAML reads 5.10 as the number 5.1.",
    )

    @field_validator("model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        if value in REFUSED_SWITCH_MODELS:
            msg = f"switch model '{value}' is not supported: {REFUSED_SWITCH_MODELS[value]}"
            raise ValueError(msg)
        if value not in SWITCH_MODELS:
            raise ValueError(unknown_choice("switch model", value, SWITCH_MODELS))
        return value

    @field_validator("nos")
    @classmethod
    def _rendered_nos(cls, value: Nos) -> Nos:
        if value in UNRENDERED_NOS:
            msg = f"nos '{value}' is not rendered: {UNRENDERED_NOS[value]}"
            raise ValueError(msg)
        return value

    @field_validator("nos_version", mode="before")
    @classmethod
    def _quoted_release(cls, value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            msg = f'write the release as a quoted string, e.g. nos_version: "{value}" (YAML reads 5.10 as the number 5.1)'
            raise ValueError(msg)
        return value

    @property
    def release(self) -> str:
        """The release the tier runs: ``nos_version``, or the NOS's default."""
        return self.nos_version or default_release(self.nos)


class SuperSpineSpec(TierSpec):
    """The third tier: leaves and spines form pods, and spine k of every pod uplinks to the super-spines of plane k.

    A five-stage Clos as in RFC 7938 section 3.2 (Tier-1 = super-spines, Tier-2 = pod spines, Tier-3 = leaves). The
    planner sizes pods from the spines' radix and this tier's oversubscription target; every number below is optional.
    """

    oversubscription: Oversubscription = Field(
        default="1:1", description="Pod spine target: bandwidth down to the leaves over bandwidth up to the super-spines."
    )
    uplink_speed_gbps: Annotated[int, Field(ge=1, le=1600)] | None = Field(
        default=None, description="Speed of spine-super-spine links; default: the leaf-spine speed."
    )
    leaves_per_pod: Annotated[int, Field(ge=1, le=MAX_RADIX)] | None = Field(
        default=None,
        description="Leaves per pod; default: as many as a spine's downlinks take (whole scalable units on rail-optimized fabrics).",
    )
    pods: Annotated[int, Field(ge=1, le=MAX_RADIX)] | None = Field(
        default=None,
        description="Pods the super-spine tier is built for (room to grow); default: the pods the nodes fill. "
        "Pods added up to this number leave every existing switch, address and cable as it is.",
    )
    super_spines_per_plane: Annotated[int, Field(ge=1, le=MAX_RADIX)] | None = Field(
        default=None, description="Force the super-spines per plane (must divide a spine's uplinks); default: the fewest that take `pods` pods."
    )
    asn: Asn = Field(default=65000, description="The ASN every super-spine shares (RFC 7938 section 5.2.1).")
    pod_asn_base: Asn = Field(default=65001, description="Pod P's spines share ASN pod_asn_base + P - 1.")
    p2p_pool: IPv4Network = Field(
        default=IPv4Network("10.252.0.0/15"),
        description="The /31s of spine-super-spine links (p2p-31 underlay), keyed by spine id and uplink.",
    )

    @field_validator("oversubscription")
    @classmethod
    def _usable_ratio(cls, value: str) -> str:
        return check_ratio(value)


class UnderlaySpec(SpecModel):
    """eBGP underlay: one ASN per leaf, one shared ASN for the spine tier."""

    addressing: Literal["p2p-31", "unnumbered"] = Field(
        default="p2p-31", description="Numbered /31 fabric links, or BGP unnumbered over IPv6 link-local."
    )
    loopback_pool: IPv4Network = IPv4Network("10.255.0.0/16")
    leaf_loopback_offset: Annotated[int, Field(ge=1, le=MAX_OFFSET)] = Field(
        default=256, description="Leaf N's loopback is loopback_pool[leaf_loopback_offset + N]; spine N's is loopback_pool[N]."
    )
    p2p_pool: IPv4Network = IPv4Network("10.254.0.0/16")
    spine_asn: Asn = 65100
    leaf_asn_base: Asn = Field(default=65101, description="Leaf N gets ASN leaf_asn_base + N - 1.")
    bfd: bool = True
    bfd_interval_ms: Annotated[int, Field(ge=50, le=10000)] = 300
    bfd_multiplier: Annotated[int, Field(ge=2, le=50)] = 3
    max_paths: Annotated[int, Field(ge=1, le=512)] = 64


class CableLengthSpec(SpecModel):
    """Cable lengths in metres; they size PFC headroom buffers."""

    host: Annotated[int, Field(ge=1, le=10000)] = 5
    fabric: Annotated[int, Field(ge=1, le=10000)] = 40


class ManagementSpec(SpecModel):
    """Management services every switch gets: management VRF, NTP, syslog, DNS; SSH only from the OOB plane."""

    vrf: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")] = "mgmt"
    ntp_servers: tuple[IPv4Address, ...] = Field(default=(), max_length=16)
    syslog_servers: tuple[IPv4Address, ...] = Field(default=(), max_length=16)
    dns_servers: tuple[IPv4Address, ...] = Field(default=(), max_length=8)
    domain: DomainName | None = None
    mgmt_pool: IPv4Network | None = Field(
        default=None, description="Switch management addresses (inside the oob plane); default: the oob plane's last /22."
    )
    mgmt_leaf_offset: Annotated[int, Field(ge=1, le=MAX_OFFSET)] = Field(
        default=128, description="Leaf N's management address is mgmt_pool[mgmt_leaf_offset + N]; spine N's is mgmt_pool[N + 1]."
    )
    gnmi: bool = Field(
        default=True,
        description="Switches serve gNMI in the management VRF for the gnmic collector `export telemetry` writes "
        "(EOS: management api gnmi on 6030; NX-OS: feature grpc on 50051). false: no gNMI server is rendered and the "
        "collector leaves those switches out.",
    )


# The NIC Configuration Operator's Spectrum-X settings (NicConfigurationTemplate.spec.template.spectrumXOptimized, CRD
# config/crd/bases/configuration.net.nvidia.com_nicconfigurationtemplates.yaml of Mellanox/nic-configuration-operator at
# tag network-operator-v26.4.1): version enum RA1.3..RA2.2, multiplaneMode none|swplb|hwplb|uniplane, numberOfPlanes
# 1|2|4; CEL rules: enabled only for nicType 1023 (ConnectX-8), 1025 (ConnectX-9) or a2dc (BlueField-3 SuperNIC), hwplb
# only on 1023/1025, RA1.3/RA2.0 only with multiplaneMode none and 1 plane.
SpectrumXVersion = Literal["RA1.3", "RA2.0", "RA2.1", "RA2.2"]
SPECTRUM_X_NIC_TYPES = {"1023": "ConnectX-8 SuperNIC", "1025": "ConnectX-9 SuperNIC", "a2dc": "BlueField-3 SuperNIC"}
SPECTRUM_X_PLANES = (1, 2, 4)


class SpectrumXSpec(SpecModel):
    """The compute NICs' Spectrum-X configuration, exported as a NicConfigurationTemplate (``export k8s``)."""

    version: SpectrumXVersion = Field(default="RA2.2", description="Spectrum-X reference architecture the NICs are tuned for.")
    multiplane_mode: Literal["swplb", "hwplb"] = Field(
        default="swplb",
        description="On a multi-plane fabric: swplb (software plane load balancing: a PF per plane) or hwplb (hardware, "
        "ConnectX-8/9 only). One plane always exports multiplaneMode none.",
    )
    nic_type: Literal["1023", "1025", "a2dc"] = Field(
        description="PCI device id of the compute NICs the template selects: 1023 ConnectX-8, 1025 ConnectX-9, a2dc BlueField-3 SuperNIC."
    )

    @model_validator(mode="after")
    def _hwplb_nics(self) -> SpectrumXSpec:
        if self.multiplane_mode == "hwplb" and self.nic_type == "a2dc":
            msg = "hwplb runs only on ConnectX-8 (nic_type 1023) or ConnectX-9 (1025) SuperNICs; use multiplane_mode: swplb"
            raise ValueError(msg)
        return self


class FabricSpec(SpecModel):
    """Leaf/spine compute fabric; with ``super_spine`` a three-tier fabric of pods."""

    topology: Literal["rail-optimized", "fat-tree"] = Field(
        description="rail-optimized: port N of every node in a scalable unit goes to rail leaf N. fat-tree: nodes fill leaves in order."
    )
    leaf: TierSpec
    spine: TierSpec
    super_spine: SuperSpineSpec | None = Field(
        default=None,
        description="Opt-in third tier: leaves and spines form pods (spines and uplinks_per_leaf then count per pod), "
        "joined by super-spines in planes.",
    )
    oversubscription: Oversubscription = "1:1"
    su_size: Annotated[int, Field(ge=1, le=1024)] = Field(
        default=32, description="Node slots per scalable unit (node id N sits in SU (N-1)//su_size + 1)."
    )
    host_ports_per_leaf: Annotated[int, Field(ge=1, le=MAX_RADIX)] | None = Field(
        default=None, description="fat-tree only: host ports per leaf; default: what the radix leaves after the uplinks."
    )
    uplinks_per_leaf: Annotated[int, Field(ge=1, le=MAX_RADIX)] | None = Field(
        default=None, description="Force the uplink count per leaf; default: as many as the oversubscription target needs."
    )
    spines: Annotated[int, Field(ge=1, le=MAX_RADIX)] | None = Field(
        default=None,
        description="Force the spine count (must divide uplinks_per_leaf); default: the fewest that take every uplink "
        "(a single spine is a warning: it has no redundancy).",
    )
    uplink_speed_gbps: Annotated[int, Field(ge=1, le=1600)] | None = Field(
        default=None,
        description="Speed of leaf-spine links, e.g. 800 on SN5600 with 400G hosts; default: the host-port speed. Both tiers' models must run it.",
    )
    mtu: Annotated[int, Field(ge=1500, le=9216)] | None = Field(
        default=None,
        description="MTU of every switch port. Default: the largest every tier's model and NOS accepts on a routed port "
        "(catalog max_mtu: 9214 on EOS, 9216 elsewhere), so both ends of every link agree.",
    )
    underlay: UnderlaySpec = UnderlaySpec()
    cable_length_m: CableLengthSpec = CableLengthSpec()
    management: ManagementSpec = ManagementSpec()
    load_balancing: LoadBalancingSpec = Field(
        default=LoadBalancingSpec(), description="ECMP hash fields, adaptive routing and the NCCL queue pairs to match (RoCE fabrics)."
    )
    planes: Annotated[int, Field(ge=1, le=MAX_PLANES)] = Field(
        default=1,
        description="Parallel compute planes (2-4): each is its own leaf/spine (or three-tier) fabric with its own switches "
        "(named p<k>-...), pools, ASNs and cables, and no link joins two planes. Node ports split across them by plane_split. "
        "Default 1: one fabric, as before.",
    )
    plane_split: PlaneSplit = Field(
        default="port",
        description="How node ports split across planes. port: port k of every NIC to plane k (the profile's ports_per_nic; "
        "one port per plane as on DGX SuperPOD B300, or each NIC port to a different ToR, dual-ToR as in Alibaba HPN). "
        "nic: whole NICs, NIC n to plane n mod planes (each GPU's NICs across planes).",
    )
    plane_spines: PlaneSpines = Field(
        default="separate",
        description="separate: every plane has its own spine (and super-spine) switches. shared: one spine layer for every "
        "plane's leaves, a VRF per plane on each spine (two tiers; FRR, SONiC, Cumulus, EOS and NX-OS spines), "
        "see fabric.plan.compute.shared_spines.",
    )

    spectrum_x: SpectrumXSpec | None = Field(
        default=None,
        description="The compute NICs' Spectrum-X settings (NIC Configuration Operator): multiplaneMode and numberOfPlanes follow planes.",
    )

    @field_validator("oversubscription")
    @classmethod
    def _usable_ratio(cls, value: str) -> str:
        return check_ratio(value)

    @model_validator(mode="after")
    def _spectrum_x_planes(self) -> FabricSpec:
        sx = self.spectrum_x
        if sx is not None and self.planes not in SPECTRUM_X_PLANES:
            msg = f"spectrum_x: the NIC Configuration Operator configures 1, 2 or 4 planes, not {self.planes}; use planes: 2 or 4"
            raise ValueError(msg)
        if sx is not None and self.planes > 1 and sx.version in ("RA1.3", "RA2.0"):
            msg = f"spectrum_x: {sx.version} has no multiplane mode (RA2.1 introduced it); use version: RA2.2"
            raise ValueError(msg)
        if sx is not None and self.planes > 1 and self.plane_split == "nic":
            # Spectrum-X multiplane splits every SuperNIC across the planes: swplb "Each SuperNIC is split into multiple PFs,
            # each assigned to a separate plane"; hwplb "NIC LAG and Hardware Plane Load Balancing (hwplb) handle per-plane
            # fan-out at the hardware layer" (NVIDIA Network Operator 26.4.0, Software / Hardware Multiplane Spectrum-X Quick
            # Start). plane_split: nic cables each NIC to one plane, which numberOfPlanes would split again.
            msg = (
                f"spectrum_x: Spectrum-X multiplane ({sx.multiplane_mode}) splits each SuperNIC's ports across the planes, but "
                "plane_split: nic puts every port of a NIC on one plane; use plane_split: port, or drop spectrum_x"
            )
            raise ValueError(msg)
        return self

    @property
    def switch_mtu(self) -> int:
        """The MTU every switch port gets: ``mtu``, or the smallest limit of the tiers (9216 where none is recorded)."""
        if self.mtu is not None:
            return self.mtu
        limits = [SWITCH_MODELS[t.model].max_mtu(t.nos) for t in self.tier_specs.values() if t.model in SWITCH_MODELS]
        return min([limit for limit in limits if limit is not None], default=JUMBO_MTU)

    @property
    def tier_specs(self) -> dict[str, TierSpec]:
        """Each tier's spec by its field name: leaf, spine and, on a three-tier fabric, super_spine."""
        tiers: dict[str, TierSpec] = {"leaf": self.leaf, "spine": self.spine}
        if self.super_spine is not None:
            tiers["super_spine"] = self.super_spine
        return tiers

    @property
    def target_ratio(self) -> Fraction:
        """The oversubscription target as a number (downlink / uplink)."""
        return parse_ratio(self.oversubscription)
