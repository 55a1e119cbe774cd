"""Where each NOS's gNMI server listens: one table for the switch config (render) and the collector (export telemetry).

Sources, per NOS:

- **EOS**: "To start the gNMI server, which listens by default on TCP/6030 configure the gRPC transport under
  management api gnmi" (aristanetworks.github.io/openmgmt, Configuration, "OpenConfig"). The render writes the port
  anyway, so the collector and the switch agree even if a release changes its default.
- **NX-OS**: ``feature grpc`` starts the gRPC agent in the management VRF; Cisco's "Configure and Verify gRPC gNMI on
  Nexus 9000" (document 220640, N9K-C93180YC-FX on 9.3(9)) shows ``show grpc gnmi transactions`` with
  "Vrf : management" and "Server address : [::]:50051" for a config of ``feature grpc`` alone; ``grpc port`` sets it
  (NX-API REST SDK guide 9.3(x), "Configuring GRPC": ``grpc port``, DME ``grpcInst.port``).
- **Cumulus Linux**: "Specify the listening port. The default port is 9339" (NVIDIA Cumulus Linux 5.13-5.16, "gNMI
  Streaming", gNMI with Cumulus Linux: ``nv set system gnmi-server listening-address``, ``... state enabled``; the NVUE
  reference's ``nv show system gnmi-server`` is "Introduced in Cumulus Linux 5.13.0"). Rendered from 5.13 on; before,
  the only gNMI agent is NetQ's (``netq config add agent gnmi-enable true``, same port), which is no NVUE config.
- **SONiC**: the telemetry container's port in sonic-net/SONiC ``doc/system-telemetry/grpc_telemetry.md`` examples
  is 8080. Not rendered either.
"""

from __future__ import annotations

from fabric.catalog.releases import release_key

GNMI_PORTS: dict[str, int] = {"sonic": 8080, "cumulus": 9339, "eos": 6030, "nxos": 50051}
"""The gNMI port the collector dials, per NOS (sources: module docstring)."""

RENDERED: frozenset[str] = frozenset({"eos", "nxos", "cumulus"})
"""NOSes whose switch config the render gives a gNMI server, in the releases ``FIRST_RELEASE`` names (SONiC runs its
telemetry container as the image sets it up)."""

FIRST_RELEASE: dict[str, str] = {"cumulus": "5.13"}
"""The first release whose config can start the gNMI server, where not every supported release can."""


def gnmi_port(nos: str, release: str, *, enabled: bool) -> int | None:
    """The port a switch's rendered gNMI server listens on; None when the render gives it none (gNMI off, another NOS,
    or a release before the NOS's config could start one).

    Example:
        >>> gnmi_port("eos", "4.34", enabled=True), gnmi_port("nxos", "10.4", enabled=True), gnmi_port("eos", "4.34", enabled=False)
        (6030, 50051, None)
        >>> gnmi_port("cumulus", "5.14", enabled=True), gnmi_port("cumulus", "5.11", enabled=True), gnmi_port("sonic", "202411", enabled=True)
        (9339, None, None)
    """
    first = FIRST_RELEASE.get(nos)
    if not enabled or nos not in RENDERED or (first is not None and release_key(release) < release_key(first)):
        return None
    return GNMI_PORTS[nos]
