"""Which NVLink domain each node is in, as its GPUs report it: ``nvidia-smi -q`` read strictly, one node at a time.

On GB200/GB300 (NVL72 racks) the rack a VM or tray sits in is known only to the node: Azure does not say which VMs of
a scale set share a rack. Each GPU that has joined the NVLink fabric reports, in ``nvidia-smi -q``'s "Fabric" section,
``State`` (registration with the fabric manager: "Not Started", "In Progress", "Completed"), ``Status`` (its error,
"Success" once it worked), ``ClusterUUID`` and ``CliqueId``. NVML gives the same fields (``nvmlDeviceGetGpuFabricInfoV``,
``nvmlGpuFabricInfo_v3_t``: "cliqueId: ID of the fabric clique to which this GPU belongs", "clusterUuid: Uuid of the
cluster to which this GPU belongs", "status: ... Must be checked only if state returns complete";
https://docs.nvidia.com/deploy/nvml-api/structnvmlGpuFabricInfo__v3__t.html, R590). One NVLink domain is one
(ClusterUUID, CliqueId): NCCL compares both, "clique ID by itself is not unique so we need to compare the cluster UUID as
well" (NVIDIA/nccl issue 1301, NVIDIA's answer). Azure's CycleCloud Workspace for Slurm builds its block topology from
exactly these two fields (Azure/cyclecloud-slurm@049346f ``azure-slurm/slurmcc/topology.py`` ``_run_get_rack_id_command``:
``nvidia-smi -q | grep 'ClusterUUID' | head -n 1`` and the same for ``CliqueId``; README "azslurm topology -n": one
``BlockName`` per "ClusterUUID and CliqueID"). It reads the first GPU only and never the state; here every GPU is read,
a node whose GPUs disagree is refused, and so is one whose fabric registration is not State Completed / Status Success.
An all-zero ClusterUUID is refused too: NVML reports it where there is no multi-node NVLink fabric (meta-pytorch/
torchcomms PR 1385: "On H100 (non-MNNVL), NVML may report state=COMPLETED with a zeroed cluster UUID").

``nvidia-smi --query-gpu`` also has ``fabric.state``, ``fabric.status``, ``fabric.clusterUuid`` and ``fabric.cliqueId``
(fields a GPU exporter's catalog lists; NVIDIA's ``--help-query-gpu`` text was not read here), and ``nvidia-smi -q -x``
has ``<fabric><state>..<cliqueId>..<clusterUuid>``: neither is parsed; ``-q`` is what Azure's tool and the
``cloud_fabric`` role's GPU read-back already run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fabric.errors import Finding, InputError

SUFFIX = ".nvidia-smi-q.txt"  # <hostname>.nvidia-smi-q.txt, as roles/cloud_fabric/tasks/nvlink_facts.yml writes it
MAX_BYTES = 4 * 1024 * 1024  # nvidia-smi -q of a 4-GPU GB200 node is ~30 KB, of an 8-GPU board ~60 KB
MAX_GPUS = 64
MAX_NODES = 4096  # files in one facts directory
MAX_CLIQUE = 2**32 - 1  # cliqueId is an unsigned int (nvmlGpuFabricInfo_v3_t)
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")  # one DNS label, as the cluster definition's hostnames
_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_FIELD = re.compile(r"^(\s*)(\S.*?)\s*:\s?(.*)$")
_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_FIX = "Fix: on the node run nvidia-smi -q and check its Fabric section; collect again once every GPU shows State Completed, Status Success"


@dataclass(frozen=True, order=True)
class NvlinkDomain:
    """One multi-node NVLink domain: the fabric's cluster UUID and the clique (partition) inside it."""

    cluster_uuid: str
    clique_id: int


@dataclass(frozen=True)
class NodeFabric:
    """What one node's GPUs report: its NVLink domain and how many GPUs said so."""

    host: str
    domain: NvlinkDomain
    gpus: int


def _short(value: str) -> str:
    return repr(value if len(value) <= 64 else value[:61] + "...")


def _fabric_of(lines: list[str], start: int) -> dict[str, str]:
    """The ``Fabric`` section's direct fields from ``lines[start]`` on (until a line indented no deeper than the section)."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    child: int | None = None  # the depth of the section's own fields; deeper ones (Health's) are not its
    fields: dict[str, str] = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if depth <= indent:
            break
        child = depth if child is None else child
        match = _FIELD.match(line)
        if match is not None and depth == child:
            fields.setdefault(match.group(2), match.group(3).strip())
    return fields


def _gpu_sections(lines: list[str]) -> list[tuple[str, int, int]]:
    """(PCI bus id, first line, end) of each ``GPU <bus id>`` section."""
    starts = [(m.group(1), n) for n, line in enumerate(lines) if (m := _GPU.match(line.rstrip())) is not None]
    return [(bus, n, starts[i + 1][1] if i + 1 < len(starts) else len(lines)) for i, (bus, n) in enumerate(starts)]


def _state_problem(fabric: dict[str, str] | None) -> str | None:
    """What keeps a GPU's Fabric section from naming its domain: missing, incomplete, or not registered."""
    if fabric is None:
        return "has no Fabric section (a driver older than R550, or not nvidia-smi -q output)"
    missing = [key for key in ("State", "Status", "CliqueId", "ClusterUUID") if key not in fabric]
    if missing:
        return f"the Fabric section has no {', '.join(missing)}"
    state, status = fabric["State"], fabric["Status"]
    if state != "Completed":
        why = "this GPU has no multi-node NVLink fabric" if state in {"N/A", "Not Supported"} else "it has not joined its NVLink domain"
        return f"fabric State is {_short(state)}, not Completed: {why}"
    if status != "Success":
        return f"fabric State is Completed but Status is {_short(status)}, not Success: registration failed"
    return None


def _gpu_domain(host: str, bus: str, fabric: dict[str, str] | None) -> tuple[NvlinkDomain | None, str | None]:
    """One GPU's domain, or what is wrong with its Fabric section."""
    where = f"{host}: GPU {bus}"
    problem = _state_problem(fabric)
    if problem is not None or fabric is None:
        return None, f"{where}: {problem}. {_FIX}"
    uuid = fabric["ClusterUUID"].lower()
    if not _UUID.match(uuid) or set(uuid) <= {"0", "-"}:
        return None, f"{where}: ClusterUUID {_short(fabric['ClusterUUID'])} is not a fabric's UUID (8-4-4-4-12 hex digits, not all zero). {_FIX}"
    clique = fabric["CliqueId"]
    if not clique.isascii() or not clique.isdigit() or len(clique) > len(str(MAX_CLIQUE)) or int(clique) > MAX_CLIQUE:
        return None, f"{where}: CliqueId {_short(clique)} is not a number from 0 to {MAX_CLIQUE}. {_FIX}"
    return NvlinkDomain(uuid, int(clique)), None


def parse_nvidia_smi_q(text: str, *, host: str, file: str) -> NodeFabric:
    """The NVLink domain of node ``host`` from its ``nvidia-smi -q`` output ``text`` (read from ``file``).

    Every GPU must be in the fabric (State Completed, Status Success) with the same ClusterUUID and CliqueId.

    Raises:
        InputError: naming the node, the file and each problem (a GPU's state, a disagreement, a malformed output).

    Example:
        >>> gpu = "GPU 00000008:01:00.0\\n    Fabric\\n        State : Completed\\n        Status : Success\\n"
        >>> ids = "        CliqueId : 2\\n        ClusterUUID : dc6e40c4-d722-4357-9ba6-5291dd461278\\n"
        >>> parse_nvidia_smi_q("Attached GPUs : 1\\n" + gpu + ids, host="gb001", file="gb001.txt").domain
        NvlinkDomain(cluster_uuid='dc6e40c4-d722-4357-9ba6-5291dd461278', clique_id=2)
    """
    problems = _problems(text, host)
    if isinstance(problems, NodeFabric):
        return problems
    raise InputError([Finding((host,), p, file=file) for p in problems], file)


def _problems(text: str, host: str) -> NodeFabric | list[str]:
    if len(text) > MAX_BYTES:
        return [f"{host}: {len(text)} characters, more than the {MAX_BYTES} an nvidia-smi -q output of {MAX_GPUS} GPUs can take"]
    if _BAD_CHARS.search(text):
        return [f"{host}: control characters in the output; not nvidia-smi -q text. {_FIX}"]
    lines = text.splitlines()
    attached = [m.group(3).strip() for line in lines if (m := _FIELD.match(line)) and not m.group(1) and m.group(2) == "Attached GPUs"]
    sections = _gpu_sections(lines)
    if len(attached) != 1 or not attached[0].isdigit() or not 1 <= int(attached[0]) <= MAX_GPUS:
        return [f"{host}: no 'Attached GPUs : N' line with N from 1 to {MAX_GPUS}; not nvidia-smi -q output. {_FIX}"]
    if len(sections) != int(attached[0]):
        return [f"{host}: 'Attached GPUs : {attached[0]}' but {len(sections)} 'GPU <bus id>' sections; a truncated output. {_FIX}"]
    domains: dict[str, NvlinkDomain] = {}
    problems: list[str] = []
    for bus, start, end in sections:
        fabric_lines = [n for n in range(start + 1, end) if lines[n].strip() == "Fabric"]
        if len(fabric_lines) > 1:
            problems.append(f"{host}: GPU {bus} has {len(fabric_lines)} Fabric sections; not nvidia-smi -q output. {_FIX}")
            continue
        domain, problem = _gpu_domain(host, bus, _fabric_of(lines[:end], fabric_lines[0]) if fabric_lines else None)
        if problem is not None:
            problems.append(problem)
        elif domain is not None:
            domains[bus] = domain
    if len(set(domains.values())) > 1:
        said = "; ".join(f"GPU {bus}: ClusterUUID {d.cluster_uuid} CliqueId {d.clique_id}" for bus, d in sorted(domains.items()))
        problems.append(f"{host}: its GPUs report different NVLink domains ({said}); a node sits in one rack. {_FIX}")
    if problems:
        return problems
    return NodeFabric(host, next(iter(domains.values())), len(sections))


def read_facts_dir(directory: Path) -> dict[str, NodeFabric]:
    """Every ``<hostname>.nvidia-smi-q.txt`` in ``directory``, parsed: hostname → its NVLink domain.

    Raises:
        InputError: the directory is missing or empty, holds anything else (a link, a folder, another name), a file is
            too large, or any node's output is refused (every node's problems at once).
    """
    where = str(directory)
    if not directory.is_dir():
        raise InputError([Finding((), f"--nvlink-facts: {where!r} is not a directory of <hostname>{SUFFIX} files", file=where)], where)
    entries = sorted(directory.iterdir())
    if len(entries) > MAX_NODES:
        raise InputError([Finding((), f"--nvlink-facts: {len(entries)} entries, more than {MAX_NODES} nodes", file=where)], where)
    findings: list[Finding] = []
    facts: dict[str, NodeFabric] = {}
    for entry in entries:
        host = entry.name.removesuffix(SUFFIX)
        if entry.is_symlink() or not entry.is_file() or not entry.name.endswith(SUFFIX) or not _HOST.match(host):
            msg = f"--nvlink-facts: {entry.name!r} is not a <hostname>{SUFFIX} file; the directory holds only those. Fix: move it out"
            findings.append(Finding((), msg, file=str(entry)))
            continue
        if entry.stat().st_size > MAX_BYTES:
            findings.append(Finding((host,), f"{host}: {entry.stat().st_size} bytes, more than {MAX_BYTES}", file=str(entry)))
            continue
        try:
            facts[host] = parse_nvidia_smi_q(entry.read_bytes().decode("utf-8"), host=host, file=str(entry))
        except UnicodeDecodeError:
            findings.append(Finding((host,), f"{host}: not UTF-8 text; not nvidia-smi -q output. {_FIX}", file=str(entry)))
        except InputError as refused:
            findings.extend(refused.errors)
    if not facts and not findings:
        findings.append(Finding((), f"--nvlink-facts: {where!r} holds no <hostname>{SUFFIX} file; collect them first (docs/cloud.md)", file=where))
    if findings:
        raise InputError(findings, where)
    return facts
