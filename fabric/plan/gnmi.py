"""Where each NOS's gNMI server listens: one table for the switch config (render) and the collector (export telemetry).

Sources, per NOS:

- **EOS**: "To start the gNMI server, which listens by default on TCP/6030 configure the gRPC transport under
  management api gnmi" (aristanetworks.github.io/openmgmt, Configuration, "OpenConfig"). The render writes the port
  anyway, so the collector and the switch agree even if a release changes its default.
- **NX-OS**: ``feature grpc`` starts the gRPC agent in the management VRF; Cisco's "Configure and Verify gRPC gNMI on
  Nexus 9000" (document 220640, N9K-C93180YC-FX on 9.3(9)) shows ``show grpc gnmi transactions`` with
  "Vrf : management" and "Server address : [::]:50051" for a config of ``feature grpc`` alone; ``grpc port`` sets it
  (NX-API REST SDK guide 9.3(x), "Configuring GRPC": ``grpc port``, DME ``grpcInst.port``).
- **Cumulus Linux**: "Specify the listening port. The default port is 9339" (NVIDIA Cumulus Linux 5.16, "gNMI
  Streaming"). Not rendered: the switches' gNMI server is left to the operator.
- **SONiC**: the telemetry container's port in sonic-net/SONiC ``doc/system-telemetry/grpc_telemetry.md`` examples
  is 8080. Not rendered either.
"""

from __future__ import annotations

GNMI_PORTS: dict[str, int] = {"sonic": 8080, "cumulus": 9339, "eos": 6030, "nxos": 50051}
"""The gNMI port the collector dials, per NOS (sources: module docstring)."""

RENDERED: frozenset[str] = frozenset({"eos", "nxos"})
"""NOSes whose switch config the render gives a gNMI server (the others run theirs as the NOS image sets it up)."""


def gnmi_port(nos: str, *, enabled: bool) -> int | None:
    """The port a switch's rendered gNMI server listens on; None when the render gives it none (gNMI off, other NOS).

    Example:
        >>> gnmi_port("eos", enabled=True), gnmi_port("nxos", enabled=True), gnmi_port("eos", enabled=False)
        (6030, 50051, None)
        >>> gnmi_port("sonic", enabled=True) is None
        True
    """
    return GNMI_PORTS[nos] if enabled and nos in RENDERED else None
