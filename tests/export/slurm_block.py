"""What Slurm's topology/block plugin checks when slurmctld reads a block topology.conf, for the Slurm Debian 12 lacks.

Debian 12 ships Slurm 22.05; topology/block arrived in 23.11, so no slurmctld here can read ``topology-block.conf``.
These are the checks of the plugin's reader, SchedMD/slurm ``src/plugins/topology/block/block_record.c`` at commit
01cec7faa194990bc95b8a18adc1c29ac7f8733b (``_read_topo_file``, ``_parse_block``, ``block_record_validate``), each
restated in words below with the message slurmctld gives; the file syntax is Slurm's ``s_p_parse_file`` key=value
form (keys case-insensitive, ``#`` comments). Written from that source for this test, not a copy of it.
"""

from __future__ import annotations

import math
import re

TOP_KEYS = {"blockname", "blocksizes"}  # block_options[]: {"BlockName", S_P_ARRAY}, {"BlockSizes", S_P_STRING}
BLOCK_KEYS = {"nodes"}  # _block_options[]: {"Nodes", S_P_STRING}
MAX_LEVEL = 15  # "if (block_level > 15)" -> fatal("Invalid BlockSizes value")


def expand_hostlist(expression: str) -> list[str]:
    """A Slurm hostlist (``gb[001-018]``, ``a1,b[1,3-4]``) as host names, in order.

    Example:
        >>> expand_hostlist("gb[001-002,009],x")
        ['gb001', 'gb002', 'gb009', 'x']
    """
    hosts: list[str] = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", expression):
        match = re.fullmatch(r"([^\[]*)\[([^\]]+)\](.*)", item)
        if match is None:
            hosts.append(item)
            continue
        prefix, ranges, suffix = match.groups()
        for part in ranges.split(","):
            low, _, high = part.partition("-")
            width = len(low)
            hosts.extend(f"{prefix}{n:0{width}d}{suffix}" for n in range(int(low), int(high or low) + 1))
    return hosts


def _pairs(line: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for token in line.split():
        key, sep, value = token.partition("=")
        if not sep:
            msg = f"Parsing error at unrecognized key: {token}"
            raise ValueError(msg)
        pairs.append((key.lower(), value))
    return pairs


def _block_levels(value: str) -> tuple[int, set[int]]:
    """BlockSizes: the base (first size) and the levels; each size a multiple of the base by a power of two <= 2**15."""
    base = 0
    levels: set[int] = set()
    for text in value.split(","):
        size = int(text) if text.strip().isdigit() else 0
        if size <= 0 or (base and size % base):
            msg = f"Invalid BlockSizes value: {text}"
            raise ValueError(msg)
        base = base or size
        level = math.log2(size // base)
        if level != math.floor(level) or level > MAX_LEVEL:
            msg = f"Invalid BlockSizes value: {text}"
            raise ValueError(msg)
        levels.add(int(level))
    return base, levels


def check_block_topology(text: str, known_nodes: set[str]) -> list[str]:
    """The errors slurmctld 23.11+ (topology/block) would stop on for this topology.conf; empty when it would start.

    ``known_nodes``: the NodeName entries of slurm.conf (``node_name2bitmap`` refuses others).

    Example:
        >>> check_block_topology("BlockName=b1 Nodes=n[1-2]\\nBlockSizes=2\\n", {"n1", "n2"})
        []
        >>> check_block_topology("BlockName=b1 Nodes=n[1-2]\\nBlockSizes=2,6\\n", {"n1", "n2"})
        ['Invalid BlockSizes value: 6']
    """
    blocks: list[tuple[str, str | None]] = []
    sizes: str | None = None
    try:
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            (key, value), *rest = _pairs(line)
            if key not in TOP_KEYS:
                return [f"Parsing error at unrecognized key: {key}"]
            if key == "blocksizes":
                sizes = value
                continue
            unknown = [k for k, _ in rest if k not in BLOCK_KEYS]
            if unknown:
                return [f"Parsing error at unrecognized key: {unknown[0]}"]
            blocks.append((value, next((v for k, v in rest if k == "nodes"), None)))
        base, _ = _block_levels(sizes) if sizes is not None else (0, set(range(5)))  # no BlockSizes: levels 0-4
    except ValueError as exc:
        return [str(exc)]
    return _validate(blocks, base, known_nodes)


def _validate(blocks: list[tuple[str, str | None]], base: int, known_nodes: set[str]) -> list[str]:
    """block_record_validate: names unique, nodes known, no block smaller than the base block."""
    if not blocks:
        return ["No blocks configured"]
    seen: set[str] = set()
    for name, nodes in blocks:
        if nodes is None:
            return [f"block {name} hasn't got nodes"]
        if name in seen:
            return [f"Block ({name}) has already been defined"]
        seen.add(name)
        hosts = expand_hostlist(nodes)
        if any(h not in known_nodes for h in hosts):
            return [f"Invalid node name ({nodes}) in block config ({name})"]
        base = base or len(hosts)  # no BlockSizes: the first block's node count is the base
        if len(hosts) < base:
            return [f"Block configuration ({name}) children count lower than bblock_node_cnt"]
    return []
