"""The schema of a switch model data file (``fabric/catalog/data/switches/<model>.yaml``): strict, frozen pydantic models.

A model has ``cages`` front-panel cages, each with ``ports_per_cage`` ports at ``speed_gbps`` (2 on a twin-port OSFP
such as the QM9700's), and ``breakout`` modes that split each cage into N ports at a lower speed. Per NOS it says how
ports are named and the largest L3 MTU the NOS accepts on them; a model that runs SONiC also carries the SONiC
platform, its SKUs and the lane layout, derived from the platform's ``port_config.ini``/``hwsku.json`` in
sonic-buildimage (each data file cites the directory it comes from).
"""

from __future__ import annotations

import string
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from fabric.catalog.text import CatalogKey, Description

Nos = Literal["sonic", "cumulus", "eos", "nxos", "frr", "mlnx-os", "nvos"]  # nvos: described, not rendered (fabric/catalog/switch_refused.py)
LinkLayer = Literal["ethernet", "infiniband"]
Speed = Annotated[int, Field(ge=1, le=1600)]
NAME_FIELDS = frozenset({"cage", "port", "sub", "sub1", "lane", "sonic"})
"""What a port-name format may use: ``cage`` (1-based), ``port`` (1-based port inside a twin-port cage), ``sub`` /
``sub1`` (0-/1-based breakout port inside the cage), ``lane`` (1-based first lane of the port inside the cage, as EOS
numbers interfaces) and ``sonic`` (the SONiC ``Ethernet<N>`` number, only on models with a ``sonic`` layout)."""
BREAKOUT_LETTERS = "abcdefgh"
# Every string of a data file that reaches a switch (port names, lanes, aliases, SKU and breakout names end up in
# config_db.json and the CLI configs) is one ASCII token of the shape sonic-buildimage's port_config.ini, hwsku.json
# and platform directories use; a length cap on each.
PORT_NAME_FORMAT_RE = r"^[A-Za-z0-9_./{}-]{1,64}$"
SONIC_PORT_NAME_RE = r"^Ethernet\d{1,4}$"  # as fabric.model.strings.SWITCH_PORT_RE["sonic"]
LANES_RE = r"^\d{1,4}(,\d{1,4}){0,15}$"  # at most 16 lanes (an OSFP cage has 8), ASIC lane numbers below 10,000
ALIAS_RE = r"^[A-Za-z0-9][A-Za-z0-9_./-]{0,31}$"  # port_config.ini aliases: etp1, etp1a, Ethernet1/1, fortyGigE0/0
HWSKU_RE = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$"  # device/<vendor>/<platform>/<hwsku> directory names: ACS-SN5600
BREAKOUT_MODE_RE = r"^\d{1,2}x\d{1,6}G?(\[[0-9G,]{0,64}\])?$"  # hwsku.json breakout modes: 2x400G[200G,100G]
PLATFORM_RE = r"^x86_64-[a-z0-9_]{1,48}-r\d$"  # device/<vendor>/<platform>: x86_64-nvidia_sn5600-r0
MAX_BUFFER_BYTES = 2**30
"""The largest shared buffer a switch ASIC has, in bytes, with room: Spectrum-4 (SN5600) carries 160 MB and its
``egress_lossless_pool_size`` is 158,229,504 (sonic-buildimage ACS-SN5600 buffers_defaults_t1.j2); 1 GiB is above
every ASIC shipping today."""
MAX_STRIDE = 64
"""Largest SONiC name or lane stride between cages: a cage has at most 16 lanes (``lanes``), and the ASIC numbering
skips at most a few cages' worth (SN4600C: lane stride 4 on 4-lane cages; SN5600: 8 on 8-lane cages)."""


def mode_speeds(mode: str) -> tuple[int, ...]:
    """Speeds in Gb/s a port of a SONiC breakout mode runs, highest first: the mode's own and the bracketed ones.

    hwsku.json / platform.json write "400G" in Gb/s and a bare number in Mb/s ("1x1000[100,10]" on the SN2201);
    speeds below 1G are left out.

    Example:
        >>> mode_speeds("2x400G[200G,100G]"), mode_speeds("1x1000[100,10]")
        ((400, 200, 100), (1,))
    """
    head, _, rest = mode.partition("[")
    tokens = [head.split("x", 1)[-1], *rest.rstrip("]").split(",")]
    gbps = [int(t[:-1]) if t.endswith("G") and t[:-1].isdigit() else int(t) // 1000 if t.isdigit() else 0 for t in tokens]
    return tuple(sorted({g for g in gbps if g > 0}, reverse=True))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PortNames(_Strict):
    """How one NOS names the ports of this model: Python format strings over ``NAME_FIELDS``."""

    native: Annotated[str, Field(pattern=PORT_NAME_FORMAT_RE)] = Field(description="A port at the native speed, e.g. 'swp{cage}'.")
    split: Annotated[str, Field(pattern=PORT_NAME_FORMAT_RE)] | None = Field(
        default=None, description="A breakout port, e.g. 'swp{cage}s{sub}'; null when no reference names them."
    )

    @field_validator("native", "split")
    @classmethod
    def _known_fields(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            used = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        except ValueError as exc:
            msg = f"'{value}' is not a valid format string ({exc})"
            raise ValueError(msg) from exc
        unknown = sorted(used - NAME_FIELDS)
        if unknown or "" in used:
            msg = f"'{value}' uses {unknown or ['{}']}; a port name may use only {{{'}, {'.join(sorted(NAME_FIELDS))}}}"
            raise ValueError(msg)
        return value


class NosSupport(_Strict):
    """What one NOS does on this model."""

    names: PortNames
    max_mtu: Annotated[int, Field(ge=1280, le=65535)] | None = Field(
        default=None, description="Largest L3 MTU the NOS accepts on a routed port; null when it does not apply (InfiniBand)."
    )
    l2_mtu: bool = Field(
        default=False,
        description="Whether the NOS has the per-port 'l2 mtu' command on this model (EOS). Arista AVD "
        "ethernet_interfaces.schema.yml: \"l2_mtu should only be defined for platforms supporting the 'l2 mtu' CLI\"; "
        "true only where a reference shows it; where false, switchports carry no MTU line.",
    )


class SonicPort(_Strict):
    """A port of a SONiC SKU outside the fabric cages (a service or management-speed port), as its port_config.ini lists it."""

    name: Annotated[str, Field(pattern=SONIC_PORT_NAME_RE)]
    lanes: Annotated[str, Field(pattern=LANES_RE)]
    alias: Annotated[str, Field(pattern=ALIAS_RE)]
    index: Annotated[int, Field(ge=1, le=1024, description="The port's cage, 1-based (cages are at most 512, plus uplinks).")]
    speed_gbps: Speed
    breakout_mode: Annotated[str, Field(pattern=BREAKOUT_MODE_RE)]
    subport: Annotated[int, Field(ge=0, le=8)] = Field(
        default=0, description="0 for a cage's only port, else the 1-based port of a broken-out cage (SONiC portconfig.py)."
    )


class SonicBuffers(_Strict):
    """The SKU's buffer objects under SONiC's dynamic buffer model (its ``buffers_defaults_objects.j2`` and ``_t1.j2``).

    ``ingress_pools``: ``separate`` gives lossy ingress traffic its own ``ingress_lossy_pool`` (the ACS-MSN2700 objects);
    ``shared`` puts it in ``ingress_lossless_pool`` (the Mellanox-SN2700-D48C8 objects). Pool sizes other than the
    egress lossless pool are computed by the switch in the dynamic model.
    """

    ingress_pools: Literal["separate", "shared"]
    egress_lossless_pool_size: Annotated[int, Field(ge=1, le=MAX_BUFFER_BYTES, description="Bytes; at most 1 GiB.")]


class SonicSku(_Strict):
    """One SONiC hardware SKU: the port layout for one port speed."""

    hwsku: Annotated[str, Field(pattern=HWSKU_RE)]
    speed_gbps: Speed
    breakout_mode: Annotated[str, Field(pattern=BREAKOUT_MODE_RE)] = Field(
        description="hwsku.json default_brkout_mode of every fabric cage, e.g. '2x400G[200G,...]'."
    )
    fec: Literal["rs", "fc", "none", "auto"] | None = Field(
        default=None, description="The fec column of port_config.ini; null when the SKU leaves FEC to the platform."
    )
    buffers: SonicBuffers
    other_ports: tuple[SonicPort, ...] = Field(default=(), max_length=64, description="Service and management-speed ports.")

    @property
    def fanout(self) -> int:
        """Ports per cage in this SKU, read from the breakout mode ('2x400G[...]' → 2)."""
        return int(self.breakout_mode.split("x", 1)[0])

    @model_validator(mode="after")
    def _mode_matches_speed(self) -> SonicSku:
        head = self.breakout_mode.split("[", 1)[0]
        count, _, speed = head.partition("x")
        mbps = int(speed[:-1]) * 1000 if speed.endswith("G") and speed[:-1].isdigit() else int(speed) if speed.isdigit() else None
        if not count.isdigit() or mbps is None:
            msg = f"breakout_mode '{self.breakout_mode}' is not a SONiC breakout mode like '2x400G[200G,100G]'"
            raise ValueError(msg)
        if mbps != self.speed_gbps * 1000:
            msg = f"breakout_mode '{self.breakout_mode}' runs {mbps // 1000} Gb/s ports but speed_gbps is {self.speed_gbps}"
            raise ValueError(msg)
        return self


class SonicLayout(_Strict):
    """SONiC's view of the model: platform, SKUs and how cage N maps to ``Ethernet<name>`` and ASIC lanes.

    Cage ``c`` (1-based) at fanout ``f`` has ports ``s = 0..f-1`` named ``Ethernet{name_stride*(c-1) + s*name_stride/f}``
    on lanes ``lane_stride*(c-1) + s*lanes/f`` onwards (``lanes/f`` lanes each, ``lanes`` the model's lanes per cage),
    alias ``etp{c}`` or ``etp{c}{a,b,...}``, index ``c``.
    """

    platform: Annotated[str, Field(pattern=PLATFORM_RE)]
    lane_stride: Annotated[int, Field(ge=1, le=MAX_STRIDE)]
    name_stride: Annotated[int, Field(ge=1, le=MAX_STRIDE)]
    default_mtu: Annotated[int, Field(ge=1280, le=9216)]
    skus: tuple[SonicSku, ...] = Field(min_length=1, max_length=16, description="One SKU per fabric port speed (a model runs at most a few).")
    breakout_modes: tuple[Annotated[str, Field(pattern=BREAKOUT_MODE_RE)], ...] = Field(
        default=(),
        max_length=8,
        description="The platform.json breakout_modes of every fabric cage (dynamic port breakout), e.g. '2x400G[200G,100G]': "
        "with them one switch runs each cage in its own mode (the default SKU's hwsku, BREAKOUT_CFG per cage); empty when "
        "the platform is only known through its SKUs.",
    )

    def mode(self, fanout: int) -> str | None:
        """The breakout mode that runs ``fanout`` ports per cage: platform.json's, else the SKU's; None when neither has one."""
        modes = (*self.breakout_modes, *(k.breakout_mode for k in self.skus))
        return next((m for m in modes if int(m.split("x", 1)[0]) == fanout), None)

    def dynamic_mode(self, fanout: int) -> str | None:
        """The platform.json breakout mode with ``fanout`` ports per cage, or None (dynamic port breakout needs one)."""
        return next((m for m in self.breakout_modes if int(m.split("x", 1)[0]) == fanout), None)

    def sku(self, speed_gbps: int) -> SonicSku | None:
        """The SKU whose fabric ports run at ``speed_gbps``, or None."""
        return next((s for s in self.skus if s.speed_gbps == speed_gbps), None)


class SwitchModel(_Strict):
    """A switch model, as its data file describes it.

    Example:
        >>> from fabric.catalog.switches import SWITCH_MODELS
        >>> m = SWITCH_MODELS["sn5600"]
        >>> m.radix(400), m.speeds(), m.port_name("sonic", 3, 400), m.port_name("cumulus", 3, 400)
        (128, (800, 400, 200, 100), 'Ethernet12', 'swp2s1')
    """

    name: CatalogKey
    description: Description = Field(description="Free text that reaches no device: printable Unicode, one line, at most 200.")
    link_layer: LinkLayer
    cages: Annotated[int, Field(ge=1, le=512)]
    ports_per_cage: Annotated[int, Field(ge=1, le=8)] = 1
    lanes: Annotated[int, Field(ge=1, le=16)] = Field(description="Electrical lanes per cage (8 on OSFP/QSFP-DD, 4 on QSFP28).")
    speed_gbps: Speed
    breakout: dict[Speed, Annotated[int, Field(ge=2, le=8)]] = Field(
        default_factory=dict[int, int], max_length=9, description="Breakout speed -> ports per cage (at most the 9 speeds below 1600 Gb/s)."
    )
    nos: dict[Nos, NosSupport] = Field(min_length=1)
    sonic: SonicLayout | None = None
    uplink_cages: Annotated[int, Field(ge=0, le=16)] = Field(
        default=0,
        description="Cages after the access cages meant for uplinks (a management switch's SFP28/QSFP28 cages), numbered on "
        "from cages + 1 and named like a native port; SONiC models list them as other_ports instead.",
    )
    uplink_speed_gbps: Speed | None = Field(default=None, description="Speed of the uplink cages; required with uplink_cages.")

    @model_validator(mode="after")
    def _consistent(self) -> SwitchModel:
        for speed in self.breakout:
            if speed >= self.speed_gbps:
                msg = f"breakout speed {speed} Gb/s is not below the native {self.speed_gbps} Gb/s"
                raise ValueError(msg)
        if bool(self.uplink_cages) != (self.uplink_speed_gbps is not None):
            msg = "uplink_cages and uplink_speed_gbps go together"
            raise ValueError(msg)
        if ("sonic" in self.nos) != (self.sonic is not None):
            msg = "a model that runs SONiC needs a 'sonic' layout, and only such a model may have one"
            raise ValueError(msg)
        for speed in self.speeds():
            fanout = self.fanout(speed) or 1
            if self.lanes % fanout:
                msg = f"{fanout} ports per cage at {speed} Gb/s do not divide the {self.lanes} lanes of a cage"
                raise ValueError(msg)
        if self.sonic is not None:
            for sku in self.sonic.skus:
                if sku.speed_gbps not in self.speeds() or sku.fanout != self.fanout(sku.speed_gbps):
                    msg = f"SONiC SKU {sku.hwsku} runs {sku.fanout} x {sku.speed_gbps}G per cage, which no speed/breakout of the model gives"
                    raise ValueError(msg)
                if sku.fanout > 1 and self.sonic.name_stride % sku.fanout:
                    msg = f"SONiC SKU {sku.hwsku}: {sku.fanout} ports per cage do not divide the name stride {self.sonic.name_stride}"
                    raise ValueError(msg)
        return self

    @property
    def ports(self) -> int:
        """Ports at the native speed (cages x ports per cage)."""
        return self.cages * self.ports_per_cage

    def fanout(self, speed_gbps: int) -> int | None:
        """Ports per cage at ``speed_gbps``, or None when the model cannot run that speed."""
        if speed_gbps == self.speed_gbps:
            return self.ports_per_cage
        return self.breakout.get(speed_gbps)

    def radix(self, speed_gbps: int) -> int | None:
        """Ports at ``speed_gbps``, or None when the model cannot run that speed.

        Example:
            >>> from fabric.catalog.switches import SWITCH_MODELS
            >>> SWITCH_MODELS["sn5600"].radix(400), SWITCH_MODELS["qm9700"].radix(400)
            (128, 64)
        """
        fanout = self.fanout(speed_gbps)
        return self.cages * fanout if fanout else None

    def speeds(self) -> tuple[int, ...]:
        """Every speed the model supports, highest first."""
        return tuple(sorted({self.speed_gbps, *self.breakout}, reverse=True))

    def port_speeds(self, fanout: int) -> tuple[int, ...] | None:
        """Speeds a port of a cage broken out ``fanout`` ways can run, highest first: the mode's own speed and the ones
        its SONiC breakout mode lists in brackets (platform.json / hwsku.json: ``2x400G[200G,100G,...]``); None when
        the catalog has no such list for the model (then only the mode's own speed is known).

        Example:
            >>> from fabric.catalog.switches import SWITCH_MODELS
            >>> SWITCH_MODELS["sn5600"].port_speeds(4), SWITCH_MODELS["7060x5-64s"].port_speeds(2)
            ((200, 100, 50, 25, 10), None)
        """
        mode = self.sonic.mode(fanout) if self.sonic else None
        if mode is None:
            return None
        return mode_speeds(mode)

    def max_mtu(self, nos: str) -> int | None:
        """The largest L3 MTU ``nos`` accepts on this model's routed ports, or None when no limit is recorded."""
        support = self.nos.get(nos)  # pyright: ignore[reportArgumentType] - any string may be asked for
        return support.max_mtu if support else None

    def port_name(self, nos: str, index: int, speed_gbps: int) -> str:
        """Name of logical port ``index`` (0-based, cage after cage) at ``speed_gbps`` under ``nos``.

        Raises:
            ValueError: the model does not run ``nos`` or that speed, ``index`` is past the last port, or no
                reference names a breakout port on this NOS.

        Example:
            >>> from fabric.catalog.switches import SWITCH_MODELS
            >>> SWITCH_MODELS["7060x6-64pe"].port_name("eos", 1, 400), SWITCH_MODELS["qm9700"].port_name("mlnx-os", 3, 400)
            ('Ethernet1/5', 'IB1/2/2')
        """
        support = self.nos.get(nos)  # pyright: ignore[reportArgumentType] - any string may be asked for
        fanout, radix = self.fanout(speed_gbps), self.radix(speed_gbps)
        if support is None or fanout is None or radix is None or not 0 <= index < radix:
            msg = f"{self.name} under {nos} has no port {index} at {speed_gbps} Gb/s"
            raise ValueError(msg)
        cage, sub = divmod(index, fanout)
        native = speed_gbps == self.speed_gbps
        fmt = support.names.native if native else support.names.split
        if fmt is None:
            msg = f"{self.name}: no reference names a {speed_gbps} Gb/s breakout port under {nos}; use the native {self.speed_gbps} Gb/s"
            raise ValueError(msg)
        fields = {
            "cage": cage + 1,
            "port": sub + 1,
            "sub": sub,
            "sub1": sub + 1,
            "lane": sub * (self.lanes // fanout) + 1,
            "sonic": self.sonic.name_stride * cage + sub * (self.sonic.name_stride // fanout) if self.sonic else -1,
        }
        return fmt.format(**fields)

    def uplink_port_names(self, nos: str) -> tuple[str, ...]:
        """Names of the uplink cages under ``nos`` (native format, cage numbers after the access cages).

        Example:
            >>> from fabric.catalog.switches import SWITCH_MODELS
            >>> SWITCH_MODELS["n9k-c9348gc-fxp"].uplink_port_names("nxos")
            ('Ethernet1/49', 'Ethernet1/50', 'Ethernet1/51', 'Ethernet1/52')
        """
        support = self.nos.get(nos)  # pyright: ignore[reportArgumentType] - any string may be asked for
        if support is None:
            return ()
        fields = {"port": 1, "sub": 0, "sub1": 1, "lane": 1, "sonic": -1}
        return tuple(support.names.native.format(cage=self.cages + k + 1, **fields) for k in range(self.uplink_cages))

    def sonic_ports(self, speed_gbps: int) -> tuple[SonicPort, ...]:
        """Every port of the SONiC SKU for ``speed_gbps``, in port_config.ini order: the cages, then the SKU's other ports.

        Raises:
            ValueError: the model has no SONiC SKU for that speed.

        Example:
            >>> from fabric.catalog.switches import SWITCH_MODELS
            >>> p = SWITCH_MODELS["sn5600"].sonic_ports(400)
            >>> len(p), p[1].name, p[1].lanes, p[1].alias, p[1].index, p[-1].name
            (129, 'Ethernet4', '4,5,6,7', 'etp1b', 1, 'Ethernet512')
        """
        sonic, sku = self.sonic, self.sonic.sku(speed_gbps) if self.sonic else None
        if sonic is None or sku is None:
            speeds = [s.speed_gbps for s in sonic.skus] if sonic else []
            msg = f"{self.name} has no SONiC SKU for {speed_gbps} Gb/s ports (SKUs exist for {speeds} Gb/s)"
            raise ValueError(msg)
        ports = [p for cage in range(self.cages) for p in self.sonic_cage_ports(cage, speed_gbps, sku.breakout_mode)]
        return (*ports, *sku.other_ports)

    def sonic_cage_ports(self, cage: int, speed_gbps: int, breakout_mode: str) -> tuple[SonicPort, ...]:
        """The ports of cage ``cage`` (0-based) run in ``breakout_mode`` at ``speed_gbps``, as SONiC's portconfig.py
        builds them from platform.json: names, lanes, aliases and subports (see ``SonicLayout``).

        Example:
            >>> from fabric.catalog.switches import SWITCH_MODELS
            >>> [(p.name, p.lanes, p.alias) for p in SWITCH_MODELS["sn5600"].sonic_cage_ports(1, 400, "2x400G[200G]")]
            [('Ethernet8', '8,9,10,11', 'etp2a'), ('Ethernet12', '12,13,14,15', 'etp2b')]
        """
        assert self.sonic is not None
        sonic = self.sonic
        fanout = int(breakout_mode.split("x", 1)[0])
        width = self.lanes // fanout
        ports: list[SonicPort] = []
        for sub in range(fanout):
            first = sonic.lane_stride * cage + sub * width
            ports.append(
                SonicPort(
                    name=f"Ethernet{sonic.name_stride * cage + sub * (sonic.name_stride // fanout)}",
                    lanes=",".join(str(first + n) for n in range(width)),
                    alias=f"etp{cage + 1}{BREAKOUT_LETTERS[sub] if fanout > 1 else ''}",
                    index=cage + 1,
                    speed_gbps=speed_gbps,
                    breakout_mode=breakout_mode,
                    subport=0 if fanout == 1 else sub + 1,
                )
            )
        return tuple(ports)
