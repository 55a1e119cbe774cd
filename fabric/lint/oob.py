"""Lint the OOB management switches' configs against the plan: the plane kept apart, every endpoint on it, the relay.

Per management switch (``plan.oob``), on the config parsed back (``fabric.lint.parse.oob``):

- **Separation**: the management ACL exists, is applied to the switch's own SSH, and permits only sources inside the
  OOB plane, where the management hosts sit; a permit from another plane or from anywhere is a finding.
- **Endpoints**: every BMC, switch management port and PDU/console the plan cables to the switch is an untagged
  member of the OOB VLAN on the planned port.
- **Relay**: the DHCP relay forwards to exactly the OOB DHCP servers (``planes.oob.network.dhcp_servers``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from ipaddress import IPv4Network, ip_network

from fabric.errors import Finding, InputError
from fabric.lint.parse.oob import OOB_CONFIG_FILE, OOB_PARSERS, OobObserved
from fabric.lint.rules import LintFinding, schema_findings
from fabric.plan.oob.types import OobPlan
from fabric.plan.types import ClusterPlan


def oob_config_files(plan: ClusterPlan) -> dict[str, str]:
    """The config file of every management switch whose NOS the OOB linter reads, by switch name."""
    return {s.name: OOB_CONFIG_FILE[s.nos] for s in (plan.oob.switches if plan.oob else ()) if s.nos in OOB_CONFIG_FILE}


def lint_oob(plan: ClusterPlan, configs: Mapping[str, str | None]) -> list[LintFinding]:
    """Lint every management switch's config text (``None``: the file is missing) against the OOB plan.

    Raises:
        InputError: a config cannot be parsed.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.render import render_configs
        >>> plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
        >>> files = render_configs(plan)
        >>> lint_oob(plan, {n: files[f"switches/{n}/{f}"] for n, f in oob_config_files(plan).items()})
        []
    """
    oob = plan.oob
    if oob is None:
        return []
    plane = IPv4Network(plan.plane("oob").cidr or "0.0.0.0/0")
    findings: list[LintFinding] = []
    for switch in oob.switches:
        if switch.name not in configs:
            continue
        text = configs[switch.name]
        if text is None:
            findings.append(LintFinding(switch.name, "config", "a rendered config", "no file", "the switch has no config to check"))
            continue
        try:
            observed = OOB_PARSERS[switch.nos](switch.name, text)
        except (ValueError, KeyError) as exc:
            msg = f"switch {switch.name}: its {OOB_CONFIG_FILE[switch.nos]} cannot be parsed ({exc}); fix the file or render it again"
            raise InputError([Finding((), msg)]) from exc
        findings.extend(_separation(observed, plane))
        findings.extend(_endpoints(oob, observed))
        findings.extend(_relay(oob, observed))
        findings.extend(schema_findings(switch.name, switch.nos, switch.nos_version, text))
    return findings


def _separation(observed: OobObserved, plane: IPv4Network) -> Iterator[LintFinding]:
    name = observed.device
    if not observed.acl_applied or not observed.permits:
        yield LintFinding(
            name, "management ACL", f"SSH permitted only from {plane}", "no ACL on the switch's SSH", "the OOB switch takes SSH from any plane"
        )
        return
    for source in observed.permits:
        try:
            inside = ip_network(source, strict=False).subnet_of(plane)  # type: ignore[arg-type] - both IPv4 here
        except (ValueError, TypeError):
            inside = False
        if not inside:
            yield LintFinding(name, "management ACL", f"sources inside {plane}", source, "the management ACL lets a source outside the OOB plane in")


def _endpoints(oob: OobPlan, observed: OobObserved) -> Iterator[LintFinding]:
    for link in (x for x in oob.links if x.a_device == observed.device and x.kind != "uplink"):
        vlan = observed.access.get(link.a_port)
        if vlan != oob.vlan:
            found = f"VLAN {vlan}" if vlan is not None else "no untagged VLAN"
            yield LintFinding(
                observed.device,
                link.a_port,
                f"untagged on VLAN {oob.vlan}",
                found,
                f"the {link.b_device} {link.kind} port is not on the OOB plane's VLAN",
            )


def _relay(oob: OobPlan, observed: OobObserved) -> Iterator[LintFinding]:
    expected = set(oob.dhcp_servers)
    if observed.relay_servers != expected:
        yield LintFinding(
            observed.device,
            "dhcp relay",
            ", ".join(sorted(expected)) or "no relay",
            ", ".join(sorted(observed.relay_servers)) or "no relay",
            "the DHCP relay does not forward to the OOB DHCP server",
        )
