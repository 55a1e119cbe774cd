"""Switch models: port count, native speed, breakout options and link layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Nos = Literal["sonic", "cumulus", "eos", "nxos", "frr", "mlnx-os"]
ETHERNET_NOS: frozenset[str] = frozenset({"sonic", "cumulus", "eos", "nxos", "frr"})


@dataclass(frozen=True, slots=True)
class SwitchModel:
    """A switch model.

    Attributes:
        ports: physical cages.
        speed_gbps: native speed of a cage.
        breakout: lower speed -> number of logical ports per cage at that speed.
        link_layer: ``ethernet`` or ``infiniband``.
        nos: operating systems the model runs.
    """

    name: str
    description: str
    ports: int
    speed_gbps: int
    breakout: dict[int, int]
    link_layer: Literal["ethernet", "infiniband"]
    nos: tuple[Nos, ...]

    def radix(self, speed_gbps: int) -> int | None:
        """Logical ports at ``speed_gbps``, or None when the model cannot run that speed.

        Example:
            >>> SWITCH_MODELS["sn5600"].radix(400)
            128
        """
        if speed_gbps == self.speed_gbps:
            return self.ports
        fanout = self.breakout.get(speed_gbps)
        return self.ports * fanout if fanout else None

    def speeds(self) -> tuple[int, ...]:
        """Every speed the model supports, highest first."""
        return tuple(sorted({self.speed_gbps, *self.breakout}, reverse=True))


SWITCH_MODELS: dict[str, SwitchModel] = {
    m.name: m
    for m in (
        SwitchModel("sn5600", "NVIDIA Spectrum-4 SN5600, 64 x 800GbE", 64, 800, {400: 2, 200: 4, 100: 4}, "ethernet", ("cumulus", "sonic")),
        SwitchModel("sn4700", "NVIDIA Spectrum-3 SN4700, 32 x 400GbE", 32, 400, {200: 2, 100: 4}, "ethernet", ("cumulus", "sonic")),
        SwitchModel("sn4600c", "NVIDIA Spectrum-3 SN4600C, 64 x 100GbE", 64, 100, {50: 2, 25: 4}, "ethernet", ("cumulus", "sonic")),
        SwitchModel("sn2201", "NVIDIA Spectrum SN2201, 48 x 1GbE + 4 x 100GbE (management)", 48, 1, {}, "ethernet", ("cumulus", "sonic")),
        SwitchModel("7060x5-64s", "Arista 7060X5-64S, 64 x 400GbE", 64, 400, {200: 2, 100: 4}, "ethernet", ("eos",)),
        SwitchModel("7060x6-64pe", "Arista 7060X6-64PE, 64 x 800GbE", 64, 800, {400: 2, 200: 4}, "ethernet", ("eos",)),
        SwitchModel("n9k-c9364d-gx2a", "Cisco Nexus 9364D-GX2A, 64 x 400GbE", 64, 400, {100: 4}, "ethernet", ("nxos", "sonic")),
        SwitchModel("n9k-c9332d-gx2b", "Cisco Nexus 9332D-GX2B, 32 x 400GbE", 32, 400, {100: 4}, "ethernet", ("nxos",)),
        SwitchModel("qm9700", "NVIDIA Quantum-2 QM9700, 64 x NDR 400Gb/s (32 OSFP)", 64, 400, {200: 2}, "infiniband", ("mlnx-os",)),
        SwitchModel("qm8700", "NVIDIA Quantum QM8700, 40 x HDR 200Gb/s", 40, 200, {100: 2}, "infiniband", ("mlnx-os",)),
        SwitchModel("lab-vswitch", "Virtual switch of the local twin (FRR in a network namespace)", 32, 100, {}, "ethernet", ("frr",)),
    )
}
