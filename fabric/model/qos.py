"""The RoCE lossless contract: one object rendered to both the NICs and the switches."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from fabric.model.base import Dscp, Priority, SpecModel

TrafficClass = Annotated[int, Field(ge=0, le=7)]


class CnpSpec(SpecModel):
    """Congestion Notification Packets (DCQCN feedback)."""

    dscp: Dscp = 48
    priority: Priority = 6
    traffic_class: TrafficClass = 6
    strict: bool = Field(default=True, description="Serve the CNP queue with strict priority.")


# NVIDIA's RoCE default on Spectrum (Cumulus Linux `nv set qos roce`, lossless mode): ECN on TC 3 from 150 KB to 1.5 MB
# at 100 % (Cumulus Linux 5.x user guide, "RDMA over Converged Ethernet - RoCE", default RoCE configuration, and
# `nv show qos congestion-control default-global`); the same pair at every port speed.
NVIDIA_ECN_MIN_BYTES = 150_000
NVIDIA_ECN_MAX_BYTES = 1_500_000

ThresholdBytes = Annotated[int, Field(ge=1000, le=100_000_000)]
DelayUs = Annotated[float, Field(gt=0, le=10_000)]


class EcnSpec(SpecModel):
    """ECN marking on the lossless queue (WRED in ECN mode).

    A threshold given here is pinned; one left out is derived per switch (``fabric.plan.buffers``): ``derive: nvidia``
    takes NVIDIA's ``qos roce`` default (150000 / 1500000 B at every speed); ``derive: queue-delay`` turns a queueing
    delay into bytes at the switch's lossless port speed (bytes = µs × Gb/s × 125), so the thresholds follow the speed.
    """

    derive: Literal["nvidia", "queue-delay"] = Field(
        default="nvidia",
        description="How an unpinned threshold is derived: nvidia (150000 / 1500000 B, NVIDIA's qos roce default at any "
        "speed) or queue-delay (min_delay_us / max_delay_us of queue at the switch's lossless port speed).",
    )
    min_threshold_bytes: ThresholdBytes | None = Field(default=None, description="Pin the minimum threshold; default: derived.")
    max_threshold_bytes: ThresholdBytes | None = Field(default=None, description="Pin the maximum threshold; default: derived.")
    min_delay_us: DelayUs = Field(default=3.0, description="derive: queue-delay: queueing delay where marking starts (3 µs = 150 KB at 400 Gb/s).")
    max_delay_us: DelayUs = Field(default=30.0, description="derive: queue-delay: queueing delay of full marking (30 µs = 1.5 MB at 400 Gb/s).")
    probability: Annotated[int, Field(ge=1, le=100, description="Marking probability at max threshold, percent.")] = 100

    @model_validator(mode="after")
    def _min_below_max(self) -> EcnSpec:
        low, high = self.min_threshold_bytes, self.max_threshold_bytes
        if low is not None and high is not None and low >= high:
            msg = (
                f"min_threshold_bytes {low} must be below max_threshold_bytes {high}; the defaults are "
                f"{NVIDIA_ECN_MIN_BYTES} and {NVIDIA_ECN_MAX_BYTES}"
            )
            raise ValueError(msg)
        if self.min_delay_us >= self.max_delay_us:
            msg = f"min_delay_us {self.min_delay_us:g} must be below max_delay_us {self.max_delay_us:g}; the defaults are 3 and 30"
            raise ValueError(msg)
        return self

    def describe(self) -> str:
        """The marking rule in a few words, before any switch's speed is known.

        Example:
            >>> EcnSpec().describe(), EcnSpec(derive="queue-delay").describe()
            ('150 KB-1.5 MB', '3-30 µs of queue')
        """
        if self.derive == "queue-delay" and (self.min_threshold_bytes is None or self.max_threshold_bytes is None):
            return f"{self.min_delay_us:g}-{self.max_delay_us:g} µs of queue"
        low = self.min_threshold_bytes if self.min_threshold_bytes is not None else NVIDIA_ECN_MIN_BYTES
        high = self.max_threshold_bytes if self.max_threshold_bytes is not None else NVIDIA_ECN_MAX_BYTES
        return f"{low // 1000} KB-{high / 1e6:g} MB"


class PfcWatchdogSpec(SpecModel):
    """PFC watchdog: breaks pause storms. On wherever PFC is on."""

    enabled: bool = True
    detection_ms: Annotated[int, Field(ge=100, le=5000)] = 200
    restoration_ms: Annotated[int, Field(ge=100, le=60000)] = 200
    polling_ms: Annotated[int, Field(ge=100, le=1000)] = 100
    action: Literal["drop", "forward", "alert"] = "drop"


class RoceSpec(SpecModel):
    """RoCEv2 lossless contract. Defaults follow NVIDIA NICs and Cumulus ``qos roce``.

    The RoCE DSCP maps to ``priority``; PFC runs on exactly that priority; the lossless traffic class
    carries nothing else; CNPs ride their own strict queue on a different priority.
    """

    dscp: Dscp = 26
    priority: Priority = 3
    traffic_class: TrafficClass = 3
    tos: Annotated[int, Field(ge=0, le=255)] | None = Field(
        default=None, description="RoCE ToS for RDMA-CM and the global tclass; default DSCP << 2 | ECT(0) = 106."
    )
    pfc_priorities: tuple[Priority, ...] = Field(default=(3,), max_length=8, description="Priorities with PFC on: exactly the RoCE priority.")
    dscp_to_priority: dict[Dscp, Priority] = Field(
        default_factory=dict[int, int],
        max_length=64,  # one entry per DSCP at most
        description="Extra DSCP -> priority entries; the RoCE and CNP DSCPs are always mapped. Unlisted DSCPs go to priority 0.",
    )
    bandwidth_percent: Annotated[int, Field(ge=1, le=99)] = Field(
        default=50, description="DWRR share of the lossless queue; the rest goes to the default queue."
    )
    cnp: CnpSpec = CnpSpec()
    ecn: EcnSpec = EcnSpec()
    pfc_watchdog: PfcWatchdogSpec = PfcWatchdogSpec()

    @property
    def effective_tos(self) -> int:
        """The ToS hosts set: the explicit one, or DSCP << 2 | ECT(0)."""
        return self.tos if self.tos is not None else (self.dscp << 2) | 2

    def summary(self) -> str:
        """The lossless RoCE contract in one line (what hosts mark, what switches honour).

        Example:
            >>> RoceSpec().summary().startswith("DSCP 26 (ToS 106) → priority 3 → TC 3, PFC on [3]")
            True
        """
        ecn, cnp, wd = self.ecn, self.cnp, self.pfc_watchdog
        watchdog = f"PFC watchdog {wd.detection_ms} ms {wd.action}" if wd.enabled else "PFC watchdog off"
        return (
            f"DSCP {self.dscp} (ToS {self.effective_tos}) → priority {self.priority} → TC {self.traffic_class}, "
            f"PFC on {list(self.pfc_priorities)}, {self.bandwidth_percent} % bandwidth; CNP DSCP {cnp.dscp} → priority {cnp.priority}"
            f"{' strict' if cnp.strict else ''}; ECN {ecn.describe()} "
            f"at {ecn.probability} %; {watchdog}"
        )

    def dscp_map(self) -> dict[int, int]:
        """The full DSCP -> priority map both ends must apply (unlisted DSCPs -> 0)."""
        merged = {**self.dscp_to_priority}
        merged.setdefault(self.dscp, self.priority)
        merged.setdefault(self.cnp.dscp, self.cnp.priority)
        return dict(sorted(merged.items()))
