"""The NCCL side of the contract: an exported (or hand-edited) NCCL env file against the plan.

NCCL_IB_TC is the IP ToS byte on RoCE v2, so its upper six bits must be the contract's DSCP (NCCL env docs,
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html); NCCL_IB_HCA must name the compute ports' HCAs
in rail order, or NCCL stripes traffic onto the wrong rails.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from fabric.errors import Finding, InputError
from fabric.lint.rules import LintFinding
from fabric.plan.nccl import MULTI_PLANE_CROSS_NIC, ROCE_V2_GID_INDEX, NcclGroup, hca_entry, is_multi_plane, nccl_groups
from fabric.plan.types import ClusterPlan


def parse_env(text: str) -> dict[str, str]:
    """``KEY=VALUE`` lines (``export`` and comments allowed), the last one winning as in a shell.

    Example:
        >>> parse_env("# c\\nexport NCCL_IB_TC=106\\nNCCL_IB_HCA==mlx5_0:1")
        {'NCCL_IB_TC': '106', 'NCCL_IB_HCA': '=mlx5_0:1'}
    """
    env: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip().removeprefix("export ").strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        env[key.strip()] = value.strip().strip("'\"")
    return env


def _hca_names(value: str) -> list[str]:
    """The device names of an NCCL_IB_HCA value: the ``=`` (exact) prefix and ``:port`` suffixes dropped."""
    return [item.split(":", 1)[0] for item in value.removeprefix("=").split(",") if item]


def lint_nccl(plan: ClusterPlan, files: Mapping[str, str]) -> list[LintFinding]:
    """Findings for NCCL env files, keyed by node group name (``nccl/<group>.env`` as ``export nccl`` writes them).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.export import export_nccl
        >>> plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
        >>> lint_nccl(plan, {"gpu": export_nccl(plan)["nccl/gpu.env"].replace("NCCL_IB_TC=106", "NCCL_IB_TC=96")})[0].message
        'NCCL_IB_TC must carry the RoCE DSCP in its upper six bits (ToS = DSCP << 2)'
    """
    if plan.cloud is not None:
        return lint_cloud_nccl(plan, files)
    groups = {g.group: g for g in nccl_groups(plan)}
    findings: list[LintFinding] = []
    for name, text in sorted(files.items()):
        where = f"nccl/{name}.env"
        group = groups.get(name)
        if group is None:
            findings.append(LintFinding(where, "group", f"one of {sorted(groups)}", name, "no node group with GPUs and RDMA ports has this name"))
            continue
        env = parse_env(text)
        expected = [p.hca or "" for p in group.ports]
        actual = _hca_names(env.get("NCCL_IB_HCA", ""))
        if actual != expected:
            message = "NCCL_IB_HCA must list the compute ports' HCAs in rail order"
            findings.append(LintFinding(where, "NCCL_IB_HCA", ",".join(expected), ",".join(actual) or "unset", message))
        elif is_multi_plane(group):
            findings += _plane_findings(where, group, env)
        if group.transport == "infiniband":
            continue
        gid = env.get("NCCL_IB_GID_INDEX")
        if gid is not None and gid != str(ROCE_V2_GID_INDEX):  # unset: NCCL >= 2.21 finds the RoCE v2 GID itself
            message = "NCCL_IB_GID_INDEX must name the RoCE v2 GID of the port's IPv4 address (fabric_check reports the live index)"
            findings.append(LintFinding(where, "NCCL_IB_GID_INDEX", str(ROCE_V2_GID_INDEX), gid, message))
        tc = env.get("NCCL_IB_TC")
        if tc is None or not tc.isdigit() or int(tc) >> 2 != plan.roce.dscp:
            message = "NCCL_IB_TC must carry the RoCE DSCP in its upper six bits (ToS = DSCP << 2)"
            findings.append(LintFinding(where, "NCCL_IB_TC", f"{plan.roce.effective_tos} (DSCP {plan.roce.dscp})", tc or "unset", message))
    return findings


def _plane_findings(where: str, group: NcclGroup, env: Mapping[str, str]) -> list[LintFinding]:
    """A multi-plane group's file against its planes (``fabric.plan.nccl``): NCCL_CROSS_NIC must be 0 (unset is NCCL's
    2, which may pair ports of two planes), and a rail or plane field an entry of NCCL_IB_HCA gives must be its port's
    (NCCL >= 2.30.7 keeps rings and connections by them). An entry without the fields is older NCCL's form, not wrong."""
    findings: list[LintFinding] = []
    cross = env.get("NCCL_CROSS_NIC")
    if cross != str(MULTI_PLANE_CROSS_NIC):
        message = "on several planes NCCL must keep each ring on one NIC, so on one plane (no route joins two planes); set NCCL_CROSS_NIC=0"
        findings.append(LintFinding(where, "NCCL_CROSS_NIC", str(MULTI_PLANE_CROSS_NIC), cross or "unset (NCCL's default 2)", message))
    entries = [item for item in env["NCCL_IB_HCA"].removeprefix("=").split(",") if item]
    wrong = [
        (entry, hca_entry(port))
        for entry, port in zip(entries, group.ports, strict=True)
        if _tags(entry) not in ((None, None), _tags(hca_entry(port)))
    ]
    if wrong:
        message = "NCCL_IB_HCA must give each HCA its own rail and plane (<hca>:<port>:<rail>:<plane>), or none; fix the entries named"
        found = ",".join(entry for entry, _ in wrong)
        findings.append(LintFinding(where, "NCCL_IB_HCA", ",".join(right for _, right in wrong), found, message))
    return findings


def _tags(entry: str) -> tuple[str | None, str | None]:
    """The rail and plane fields of an NCCL_IB_HCA entry, None where absent or empty (NCCL's -1, unassigned).

    Example:
        >>> _tags("mlx5_1:1:3:2"), _tags("mlx5_1:1"), _tags("mlx5_1::3")
        (('3', '2'), (None, None), ('3', None))
    """
    fields = [*entry.split(":")[2:4], "", ""]
    return fields[0] or None, fields[1] or None


def lint_cloud_nccl(plan: ClusterPlan, files: Mapping[str, str]) -> list[LintFinding]:
    """Findings for a cloud cluster's NCCL env files: each stack's contract variables (``CONTRACT_KEYS``: the libfabric
    provider on EFA, the FasTrak interfaces on GPUDirect-TCPXO, gIB and its traffic classes, the ND topology file) must
    carry the values the provider documents for the group's instance type.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.export import export_nccl
        >>> plan = plan_cluster(load_cluster("inventories/gcp-a3ultra/cluster.yaml"))
        >>> text = export_nccl(plan)["nccl/gpu.env"].replace("NCCL_IB_TC=52", "NCCL_IB_TC=106")
        >>> str(lint_cloud_nccl(plan, {"gpu": text})[0])
        'nccl/gpu.env: NCCL_IB_TC: the gib stack needs the value its provider documents (expected 52, found 106)'
    """
    from fabric.plan.cloud.nccl import CONTRACT_KEYS, cloud_nccl_env  # the clouds' documented settings
    from fabric.plan.cloud.stack import gpu_stack

    assert plan.cloud is not None
    provider = plan.cloud.provider
    expected = {g.group: (gpu_stack(provider, g)[0], cloud_nccl_env(provider, g)) for g in plan.cloud.groups}
    fabric_groups = sorted(name for name, (_, env) in expected.items() if env)
    findings: list[LintFinding] = []
    for name, text in sorted(files.items()):
        where = f"nccl/{name}.env"
        stack, env = expected.get(name, ("none", None))
        if not env:
            findings.append(LintFinding(where, "group", f"one of {fabric_groups}", name, "no cloud GPU group on a GPU fabric has this name"))
            continue
        actual = parse_env(text)
        for key in CONTRACT_KEYS[stack]:
            if actual.get(key) != env[key]:
                message = f"the {stack} stack needs the value its provider documents"
                findings.append(LintFinding(where, key, env[key], actual.get(key, "unset"), message))
    return findings


def read_nccl_files(directory: Path) -> dict[str, str]:
    """``<directory>/nccl/<group>.env`` files by group name (the layout ``export nccl`` writes); empty when none.

    Raises:
        InputError: a file cannot be read or is not UTF-8 text.
    """
    files: dict[str, str] = {}
    for path in sorted((directory / "nccl").glob("*.env")):
        try:
            files[path.stem] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            msg = f"cannot read the NCCL env file ({exc}); it must be a readable UTF-8 text file"
            raise InputError([Finding((), msg, file=str(path))], str(path)) from exc
    return files
