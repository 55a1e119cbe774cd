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


class EcnSpec(SpecModel):
    """ECN marking on the lossless queue (WRED in ECN mode)."""

    min_threshold_bytes: Annotated[int, Field(ge=1000, le=100_000_000)] = 150_000
    max_threshold_bytes: Annotated[int, Field(ge=1000, le=100_000_000)] = 1_500_000
    probability: Annotated[int, Field(ge=1, le=100, description="Marking probability at max threshold, percent.")] = 100

    @model_validator(mode="after")
    def _min_below_max(self) -> EcnSpec:
        if self.min_threshold_bytes >= self.max_threshold_bytes:
            msg = (
                f"min_threshold_bytes {self.min_threshold_bytes} must be below max_threshold_bytes "
                f"{self.max_threshold_bytes}; the defaults are 150000 and 1500000"
            )
            raise ValueError(msg)
        return self


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
            f"{' strict' if cnp.strict else ''}; ECN {ecn.min_threshold_bytes // 1000} KB-{ecn.max_threshold_bytes / 1e6:g} MB "
            f"at {ecn.probability} %; {watchdog}"
        )

    def dscp_map(self) -> dict[int, int]:
        """The full DSCP -> priority map both ends must apply (unlisted DSCPs -> 0)."""
        merged = {**self.dscp_to_priority}
        merged.setdefault(self.dscp, self.priority)
        merged.setdefault(self.cnp.dscp, self.cnp.priority)
        return dict(sorted(merged.items()))
