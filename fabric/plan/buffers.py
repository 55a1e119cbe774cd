"""Derived ECN thresholds and PFC headroom per switch: pure functions of port speed, cable length and MTU.

Every value carries its formula, its inputs and its source, so ``plan``, plan.json and the HTML report show how it was
reached, and lint can explain a hand-edited config that contradicts it.

- **PFC headroom (xoff)**: the bytes that still arrive after the switch sends PAUSE: the peer's response time, the round
  trip of the cable and a maximum frame in transit on each side. NVIDIA's formula, as the Linux mlx5 driver computes
  its own lossless buffer (``drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c``, ``calculate_xoff``:
  "xoff = ((301+2.16 * len [m]) * speed [Gbps] + 2.72 MTU [B])", speed floored at 40 Gb/s, integer arithmetic;
  commit 0696d60853d5 "net/mlx5e: Receive buffer configuration"). Read as physics: 301 B per Gb/s is a fixed ≈ 2.4 µs
  of response (the peer's reaction, the PAUSE frame and both PHYs, IEEE 802.1Qbb's delay budget); 2.16 B per metre per
  Gb/s covers the cable's round trip (≈ 5 ns/m each way = 1.25 B/m/Gb/s) with margin; 2.72 × MTU covers a frame being
  sent when PAUSE arrives on each side, with cell overhead. No rendered NOS takes this number: Cumulus
  (``qos pfc cable-length``) and SONiC (``CABLE_LENGTH`` with the dynamic buffer model) size headroom themselves from
  the cable length; the plan shows what they must reserve, and lint checks the length they are told.
- **ECN thresholds**: ``roce.ecn.derive`` (``fabric.model.qos.EcnSpec``): ``nvidia`` takes NVIDIA's ``qos roce``
  default, the same at every speed; ``queue-delay`` converts a queueing delay to bytes at the switch's slowest lossless
  port (the queue drains at the egress port's rate: 1 Gb/s moves 125 B per µs), rounded up to whole kilobytes because
  EOS and NX-OS take ``kbytes`` (``fabric/render/templates/{eos,nxos}/qos.j2``). Units per NOS: Cumulus NVUE and SONiC
  ``WRED_PROFILE`` take bytes, EOS and NX-OS ``kbytes``; no rendered form takes cells or microseconds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from fabric.errors import PlanError
from fabric.model.qos import NVIDIA_ECN_MAX_BYTES, NVIDIA_ECN_MIN_BYTES, EcnSpec, RoceSpec

XOFF_SOURCE = "Linux mlx5 en/port_buffer.c calculate_xoff (NVIDIA): xoff = ((301+2.16 * len [m]) * speed [Gbps] + 2.72 MTU [B])"
XOFF_FORMULA = "(301 + 216*cable_m/100) * speed_Gbps + 272*MTU/100 (integer steps, speed >= 40)"
XOFF_MIN_SPEED_GBPS = 40  # calculate_xoff: speed = max_t(u32, speed, SPEED_40000)
NVIDIA_SOURCE = "Cumulus Linux 5.x RoCE guide: nv set qos roce (lossless) default ECN 150 KB-1.5 MB on TC 3, any speed"
DELAY_SOURCE = "queue drains at the port's rate: 1 Gb/s = 125 B/us; rounded up to 1000 B (EOS/NX-OS kbytes)"
DELAY_FORMULA = "delay_us * speed_Gbps * 125, up to 1000 B"
BYTES_PER_GBPS_US = 125


@dataclass(frozen=True, slots=True)
class Derived:
    """One derived (or pinned) buffer value of one switch.

    Attributes:
        name: ``ecn_min``, ``ecn_max`` or ``pfc_headroom``.
        value: bytes.
        pinned: the definition gave the value; formula and inputs then say what it would have been derived as.
        formula: how it is computed.
        inputs: the inputs, in words (``speed 400 Gb/s, cable 5 m, MTU 9216 B, 32 ports``).
        source: where the formula comes from.
    """

    name: str
    value: int
    pinned: bool
    formula: str
    inputs: str
    source: str

    def explain(self) -> str:
        """One line: the value, and how it was reached.

        Example:
            >>> pfc_headroom(400, 5, 9216, 32).explain().split(" with ")[1]
            'speed 400 Gb/s, cable 5 m, MTU 9216 B, 32 ports'
        """
        how = "pinned in the definition; derived would be" if self.pinned else "="
        return f"{self.name} {self.value} B {how} {self.formula}" + (f" with {self.inputs}" if self.inputs else "")


@dataclass(frozen=True, slots=True)
class SwitchBuffers:
    """The ECN thresholds and PFC headroom one switch's lossless ports need."""

    switch: str
    ecn_min: Derived
    ecn_max: Derived
    headroom: tuple[Derived, ...]
    """One per distinct (speed, cable length, MTU) of the switch's lossless ports, largest first."""


def xoff_bytes(speed_gbps: int, cable_m: int, mtu: int) -> int:
    """PFC headroom in bytes, NVIDIA's formula in the mlx5 driver's integer steps (speed in Mb/s there).

    Example:
        >>> xoff_bytes(400, 5, 9216), xoff_bytes(100, 100, 1500), xoff_bytes(10, 3, 1500)
        (149467, 55780, 16360)
    """
    speed_mbps = max(speed_gbps, XOFF_MIN_SPEED_GBPS) * 1000
    return (301 + 216 * cable_m // 100) * speed_mbps // 1000 + 272 * mtu // 100


def pfc_headroom(speed_gbps: int, cable_m: int, mtu: int, ports: int) -> Derived:
    """The headroom ``ports`` lossless ports of one speed, cable length and MTU each reserve per PFC priority."""
    inputs = f"speed {speed_gbps} Gb/s, cable {cable_m} m, MTU {mtu} B, {ports} port{'s' if ports != 1 else ''}"
    return Derived("pfc_headroom", xoff_bytes(speed_gbps, cable_m, mtu), pinned=False, formula=XOFF_FORMULA, inputs=inputs, source=XOFF_SOURCE)


def delay_bytes(delay_us: float, speed_gbps: int) -> int:
    """A queueing delay as bytes at a port speed, rounded up to whole kilobytes.

    Example:
        >>> delay_bytes(3, 400), delay_bytes(30, 400), delay_bytes(3, 800), delay_bytes(3, 25)
        (150000, 1500000, 300000, 10000)
    """
    raw = delay_us * speed_gbps * BYTES_PER_GBPS_US
    return -(-round(raw * 1000) // 1_000_000) * 1000  # ceil to 1000 B, exact for float microseconds


def ecn_thresholds(ecn: EcnSpec, speed_gbps: int) -> tuple[Derived, Derived]:
    """The minimum and maximum ECN thresholds at the switch's lossless port speed, pins kept.

    Raises:
        PlanError: a pinned threshold and a derived one cross (the minimum must stay below the maximum).

    Example:
        >>> low, high = ecn_thresholds(EcnSpec(derive="queue-delay"), 800)
        >>> low.value, high.value, high.inputs
        (300000, 3000000, 'max_delay_us 30, speed 800 Gb/s')
    """
    found: list[Derived] = []
    for name, pin, delay, nvidia in (
        ("ecn_min", ecn.min_threshold_bytes, ecn.min_delay_us, NVIDIA_ECN_MIN_BYTES),
        ("ecn_max", ecn.max_threshold_bytes, ecn.max_delay_us, NVIDIA_ECN_MAX_BYTES),
    ):
        if ecn.derive == "queue-delay":
            label = "min_delay_us" if name == "ecn_min" else "max_delay_us"
            inputs = f"{label} {delay:g}, speed {speed_gbps} Gb/s"
            derived = Derived(name, delay_bytes(delay, speed_gbps), pinned=False, formula=DELAY_FORMULA, inputs=inputs, source=DELAY_SOURCE)
        else:
            derived = Derived(name, nvidia, pinned=False, formula="NVIDIA's qos roce default at every speed", inputs="", source=NVIDIA_SOURCE)
        if pin is not None:
            derived = Derived(name, pin, pinned=True, formula=f"{derived.value} B: {derived.formula}", inputs=derived.inputs, source=derived.source)
        found.append(derived)
    low, high = found
    if low.value >= high.value:
        msg = (
            f"roce.ecn: the minimum threshold {low.value} B ({'pinned' if low.pinned else 'derived'}) is not below the maximum "
            f"{high.value} B ({'pinned' if high.pinned else 'derived'}) at {speed_gbps} Gb/s; pin both thresholds, or neither"
        )
        raise PlanError(msg)
    return low, high


def switch_buffers(switch: str, ecn: EcnSpec, ports: Iterable[tuple[int, int, int]]) -> SwitchBuffers | None:
    """The buffers of one switch from its lossless ports' (speed Gb/s, cable m, MTU B); None without lossless ports.

    Example:
        >>> b = switch_buffers("leaf01", EcnSpec(derive="queue-delay"), [(400, 5, 9216), (400, 5, 9216), (800, 40, 9216)])
        >>> b.ecn_min.value, [(h.value, h.inputs) for h in b.headroom]
        (150000, [(334667, 'speed 800 Gb/s, cable 40 m, MTU 9216 B, 1 port'), (149467, 'speed 400 Gb/s, cable 5 m, MTU 9216 B, 2 ports')])
    """
    counts: dict[tuple[int, int, int], int] = defaultdict(int)
    for port in ports:
        counts[port] += 1
    if not counts:
        return None
    slowest = min(speed for speed, _, _ in counts)
    low, high = ecn_thresholds(ecn, slowest)
    headroom = sorted((pfc_headroom(s, c, m, n) for (s, c, m), n in counts.items()), key=lambda d: (-d.value, d.inputs))
    return SwitchBuffers(switch, low, high, tuple(headroom))


def resolved_roce(roce: RoceSpec, buffers: SwitchBuffers | None) -> RoceSpec:
    """The contract one switch renders: its ECN thresholds filled in from its buffers (pins stay as given); a switch
    without a lossless port (so no speed to derive at) gets the pins or NVIDIA's default, never an empty threshold.

    Example:
        >>> r = resolved_roce(RoceSpec(), None)
        >>> r.ecn.min_threshold_bytes, r.ecn.max_threshold_bytes
        (150000, 1500000)
    """
    if buffers is None:
        low, high = roce.ecn.min_threshold_bytes or NVIDIA_ECN_MIN_BYTES, roce.ecn.max_threshold_bytes or NVIDIA_ECN_MAX_BYTES
    else:
        low, high = buffers.ecn_min.value, buffers.ecn_max.value
    ecn = roce.ecn.model_copy(update={"min_threshold_bytes": low, "max_threshold_bytes": high})
    return roce.model_copy(update={"ecn": ecn})
