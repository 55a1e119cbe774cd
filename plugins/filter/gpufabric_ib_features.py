"""Ansible filter of the opensm role: adaptive routing and SHARP read back from ibdiagnet, and OpenSM's version.

What is parsed, and the published output it was recorded from:

- ``ibdiagnet --routing --r_opt=dump_only --skip ...``: the "Fabric Summary" block (``IB Switches : 3``, ``IB Aggregation
  Nodes : 3``) and ``Adaptive Routing is enabled on 3 switches``, then the stage table (``-I- Routing 0 0``) —
  NVIDIA's OpenAI cluster recipe, "AR (Adaptive Routing) validation" (gregoryl-mlnx/OpenAI.recipe @ffdcf93,
  OpenAI.recipe.md).
- ``ibdiagnet --sharp --skip ...``: ``-I- SHARP check trees finished successfully``, ``Number of aggregation nodes
  version 1: 4``, ``Number of LL aggregation trees: 2``, ``Number of streaming aggregation trees: 0`` (same recipe,
  "SHARP Validation"); the stage row ``-I- SHARP 0 0`` (SHARP Rev 3.9.0, "Testing NVIDIA SHARP Setup": "Check summary
  table in ibdiagnet output for errors in SHARP diagnostics stage").
- ``opensm --version``: ``OpenSM 3.3.23`` (upstream) or ``OpenSM 5.x`` (NVIDIA); SHARP Rev 3.12.0, Appendix E: "The
  minimal required OpenSM version for working with SHARP_am is v5.20."

Anything else in the text is ignored; a value given twice with different numbers, or a number of more than seven
digits, is reported as unreadable rather than trusted.
"""

from __future__ import annotations

import re
from typing import Any

MAX_TEXT = 4_000_000  # ibdiagnet's screen output on a large fabric is a few hundred KB; more is not its output
_COUNT = r"(\d{1,7})"
_FIELDS = {
    "switches": re.compile(rf"^\s*IB Switches\s*:\s*{_COUNT}\s*$"),
    "aggregation_nodes": re.compile(rf"^\s*IB Aggregation Nodes\s*:\s*{_COUNT}\s*$"),
    "ar_switches": re.compile(rf"^\s*Adaptive Routing is enabled on {_COUNT} switch(?:es)?\s*$"),
    "ll_trees": re.compile(rf"^\s*Number of LL aggregation trees\s*:\s*{_COUNT}\s*$"),
    "sat_trees": re.compile(rf"^\s*Number of streaming aggregation trees\s*:\s*{_COUNT}\s*$"),
}
_STAGE = re.compile(r"^-I-\s+(\S(?:.*?\S)?)\s+(\d{1,7})\s+(\d{1,7})(?:\s+.*)?$")
_VERSION = re.compile(r"\bOpenSM\s+v?(\d{1,3})\.(\d{1,3})")


def ibdiagnet_summary(text: object) -> dict[str, Any]:
    """The counts and stage results of one ibdiagnet screen output; ``unreadable`` lists what could not be trusted.

    Example:
        >>> s = ibdiagnet_summary("IB Switches             : 3\\nAdaptive Routing is enabled on 3 switches\\n-I- Routing   0   0\\n")
        >>> s["switches"], s["ar_switches"], s["stages"]["Routing"], s["unreadable"]
        (3, 3, {'warnings': 0, 'errors': 0}, [])
    """
    found: dict[str, Any] = dict.fromkeys(_FIELDS)
    found.update({"stages": {}, "sharp_trees_checked": False, "unreadable": []})
    if not isinstance(text, str):
        found["unreadable"].append(f"no ibdiagnet output (got {type(text).__name__})")
        return found
    if len(text) > MAX_TEXT:
        found["unreadable"].append(f"{len(text)} characters is not an ibdiagnet screen output (at most {MAX_TEXT})")
        return found
    for raw in text.splitlines():
        line = raw.rstrip()
        if "SHARP check trees finished successfully" in line:
            found["sharp_trees_checked"] = True
        for key, pattern in _FIELDS.items():
            match = pattern.match(line)
            if match:
                _keep(found, key, int(match.group(1)))
        stage = _STAGE.match(line)
        if stage and stage.group(1) != "Stage":
            name, counts = stage.group(1), {"warnings": int(stage.group(2)), "errors": int(stage.group(3))}
            if found["stages"].setdefault(name, counts) != counts:
                found["unreadable"].append(f"stage {name} is reported twice with different counts")
    return found


def _keep(found: dict[str, Any], key: str, value: int) -> None:
    if found[key] is None:
        found[key] = value
    elif found[key] != value:
        found["unreadable"].append(f"{key} is reported as both {found[key]} and {value}")


def ib_feature_problems(text: object, *, sharp: bool = False, adaptive_routing: bool = False, switches: int = 0, rc: int = 0) -> list[str]:
    """One line per way the fabric differs from the definition's SHARP / adaptive-routing settings; [] when it matches.

    ``switches`` is the number of InfiniBand switches the plan has (0: take ibdiagnet's own count); every one of them
    must run adaptive routing and be a SHARP aggregation node.

    Example:
        >>> ok = "IB Switches : 2\\nIB Aggregation Nodes : 2\\nAdaptive Routing is enabled on 2 switches\\n-I- Routing 0 0\\n"
        >>> ib_feature_problems(ok, adaptive_routing=True, switches=2)
        []
        >>> ib_feature_problems(ok.replace("on 2", "on 1"), adaptive_routing=True, switches=2)
        ['adaptive routing is enabled on 1 of 2 InfiniBand switches (ibdiagnet: "Adaptive Routing is enabled on 1 switches")']
    """
    if rc != 0:
        return [f"ibdiagnet exited {rc}; its output cannot show the fabric's state"]
    summary = ibdiagnet_summary(text)
    problems = [f"ibdiagnet output unreadable: {u}" for u in summary["unreadable"]]
    if problems:
        return problems
    expected = switches or summary["switches"]
    if expected is None:
        return ["ibdiagnet printed no 'IB Switches' count (no Fabric Summary): the fabric was not discovered"]
    if adaptive_routing:
        enabled = summary["ar_switches"] or 0
        if enabled < expected:
            problems.append(
                f'adaptive routing is enabled on {enabled} of {expected} InfiniBand switches (ibdiagnet: "Adaptive Routing is enabled on '
                f'{summary["ar_switches"] if summary["ar_switches"] is not None else "-"} switches")'
            )
        problems.extend(_stage_errors(summary, "Routing"))
    if sharp:
        nodes = summary["aggregation_nodes"] or 0
        if nodes < expected:
            problems.append(f"{nodes} of {expected} InfiniBand switches are SHARP aggregation nodes (ibdiagnet 'IB Aggregation Nodes')")
        trees = (summary["ll_trees"] or 0) + (summary["sat_trees"] or 0)
        if not summary["sharp_trees_checked"] or trees == 0:
            problems.append(
                f"the aggregation manager has built no SHARP trees ({trees} LL + streaming trees; "
                f"'SHARP check trees finished successfully' {'found' if summary['sharp_trees_checked'] else 'missing'}): is sharp_am running?"
            )
        problems.extend(_stage_errors(summary, "SHARP"))
    return problems


def _stage_errors(summary: dict[str, Any], stage: str) -> list[str]:
    counts = summary["stages"].get(stage)
    if counts is not None and counts["errors"]:
        return [f"ibdiagnet's {stage} stage reports {counts['errors']} error(s)"]
    return []


def opensm_version(text: object) -> str:
    """``major.minor`` of the ``OpenSM x.y`` line of ``opensm --version``; "" when there is none.

    Example:
        >>> opensm_version("-------------------------------------------------\\nOpenSM 5.20.0\\n"), opensm_version("OpenSM 3.3.23")
        ('5.20', '3.3')
    """
    if not isinstance(text, str):
        return ""
    match = _VERSION.search(text[:MAX_TEXT])
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else ""


class FilterModule:
    """gpufabric_ib_feature_problems, gpufabric_ibdiagnet_summary, gpufabric_opensm_version."""

    def filters(self) -> dict[str, Any]:
        return {
            "gpufabric_ib_feature_problems": ib_feature_problems,
            "gpufabric_ibdiagnet_summary": ibdiagnet_summary,
            "gpufabric_opensm_version": opensm_version,
        }
