"""NOS releases the renderers know the syntax of: the supported list per NOS, its default, and where the list comes from.

A tier names its release with ``nos_version`` next to ``nos``; a release outside this table is a validation error.
Renderers choose a section's template variant by release (``fabric.render.sections``), so every release listed here
has its own golden case where the syntax differs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NosReleases:
    """The releases of one NOS the renderer supports.

    Attributes:
        supported: release trains, oldest first, as the definition writes them ("5.14", "4.33", "202411").
        default: what a tier without ``nos_version`` gets.
        reference: where the list and its syntax differences come from.
    """

    supported: tuple[str, ...]
    default: str
    reference: str


NOS_RELEASES: dict[str, NosReleases] = {
    # CL 5.9 is the first release the audit's QoS forms cover with the `tcp dest-port` ACL form; 5.15 moved
    # `service ntp|dns|syslog <vrf>` to `system …` (CL 5.15 What's New; NVUE reference, NTP: "In Cumulus Linux 5.14
    # and earlier, this command is nv set service ntp <vrf-id>") and BGP BFD timers to BFD profiles (CL 5.15 user
    # guide, BFD: "configure a BFD profile, then attach the profile to the client, such as a BGP … peer group").
    # Default 5.14: the newest release whose every emitted form the audit (nos-grammar.md §3) checked line by line.
    "cumulus": NosReleases(("5.9", "5.11", "5.14", "5.15"), "5.14", "docs.nvidia.com/networking-ethernet-software (NVUE reference, What's New)"),
    # EOS 4.3x trains: AVD eos_cli_config_gen (pyavd 6.x) renders for them; the forms used here are unchanged across them.
    "eos": NosReleases(("4.32", "4.33", "4.34"), "4.33", "Arista AVD eos_cli_config_gen templates (pyavd 6.4)"),
    # NX-OS 10.x on Nexus 9000: the 10.5x QoS guide (PFC watchdog multipliers) and the 9.3(x)+ BGP link-local peering.
    "nxos": NosReleases(("10.3", "10.4", "10.5"), "10.4", "Cisco Nexus 9000 NX-OS 10.x configuration guides"),
    # SONiC community branches (sonic-buildimage 202405 / 202411); rendered by fabric/render/nos/sonic/compute.py.
    "sonic": NosReleases(("202405", "202411"), "202411", "sonic-net/sonic-buildimage release branches"),
    # MLNX-OS 3.12 (NVIDIA MLNX-OS user manual v3.12.2400 LTS): Quantum-2 `ib 1/<cage>/<port>` names, `ib sm sm-priority`.
    "mlnx-os": NosReleases(("3.11", "3.12"), "3.12", "NVIDIA MLNX-OS user manual v3.11 / v3.12"),
    # The local twin runs Debian 12's frr package (8.4.4); `vtysh --dryrun` checks every rendered frr.conf.
    "frr": NosReleases(("8.4",), "8.4", "Debian 12 frr 8.4.4 (the twin's FRR)"),
}


def release_key(release: str) -> tuple[int, ...]:
    """A release as a comparable tuple: "5.9" < "5.11" < "5.15".

    Example:
        >>> release_key("5.9") < release_key("5.11")
        True
    """
    return tuple(int(part) for part in release.split("."))


def default_release(nos: str) -> str:
    """The release a tier without ``nos_version`` runs."""
    return NOS_RELEASES[nos].default
