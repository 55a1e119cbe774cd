"""The fabric report: one self-contained HTML page a reviewer opens in a merge request.

Sections: summary, validation warnings, the lint verdict on the freshly rendered configs, planes, node groups, fabric
tiers, the diagrams (inline SVG), the RoCE contract end to end (NIC, leaf, spine), port utilisation per switch, and
the cabling per leaf (sortable tables). No external resources, no clock: the same definition gives the same bytes.
Pure: takes the plan and warnings, renders and lints in memory, returns the page.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from html import escape

from fabric.errors import Finding
from fabric.lint import lint_configs
from fabric.lint.oob import lint_oob, oob_config_files
from fabric.lint.parse.qos import CONFIG_FILE
from fabric.lint.storage import lint_storage, storage_config_files
from fabric.plan.natural import natural_key
from fabric.plan.oob.types import OobPlan
from fabric.plan.types import ClusterPlan, FabricPlan, Link, SwitchPlan
from fabric.render import render_configs
from fabric.reports.console import summary_line

_STYLE = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1900px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#eef2f7}table.sortable th{cursor:pointer}td.num{text-align:right}
.ok{color:#1a7f37;font-weight:bold}.bad{color:#b42318;font-weight:bold}.warn{color:#9a6700}
.diagram{overflow:auto;border:1px solid #ddd;margin:8px 0}.diagram svg{max-width:100%;height:auto}details{margin:2px 0}summary{cursor:pointer}
"""
_SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], col = th.cellIndex;
    var asc = th.getAttribute("data-order") !== "asc";
    var text = function (row) { return row.cells[col].textContent; };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {  // natural order: Ethernet2 before Ethernet10, 9 before 10
      var c = text(a).localeCompare(text(b), undefined, {numeric: true});
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    th.setAttribute("data-order", asc ? "asc" : "desc");
  });
});
"""


@dataclass(frozen=True, slots=True)
class Report:
    """The page and the lint verdict it shows."""

    html: str
    lint_clean: bool


def build_report(plan: ClusterPlan, warnings: tuple[Finding, ...] | list[Finding]) -> Report:
    """The HTML report of a plan: its tables, diagrams, cabling, port use, RoCE contract, lint result and warnings.

    Example:
        >>> from fabric.validate import validate_file
        >>> validated = validate_file("inventories/lab/cluster.yaml")
        >>> report = build_report(validated.plan, validated.warnings)
        >>> report.lint_clean, "<h2>Cabling per leaf</h2>" in report.html
        (True, True)
    """
    files = render_configs(plan)
    fabric = plan.fabric
    lint: list[str] = []
    checked = 0
    if fabric is not None:
        configs = {s.name: files.get(f"switches/{s.name}/{CONFIG_FILE.get(s.nos, '')}") for s in fabric.switches}
        storage = {n: files.get(f"switches/{n}/{f}") for n, f in storage_config_files(plan).items()}
        oob = {n: files.get(f"switches/{n}/{f}") for n, f in oob_config_files(plan).items()}
        # every tier, as the lint command checks them: compute, storage / in-band and OOB
        lint = [str(f) for f in [*lint_configs(plan, configs), *lint_storage(plan, storage), *lint_oob(plan, oob)]]
        checked = sum(1 for text in [*configs.values(), *storage.values(), *oob.values()] if text is not None)
    parts = [f"<h1>{escape(plan.name)}</h1>", f"<p>{escape(summary_line(plan))}</p>"]
    parts += _warnings(warnings)
    parts += ["<h2>Lint</h2>", _lint(lint, fabric, checked)]
    parts += _plan_tables(plan)
    if fabric is not None:
        parts += _fabric_tables(plan, fabric)
        for name, svg in sorted(files.items()):
            if name.startswith("topology-") and name.endswith(".svg"):
                parts += [
                    f"<h2>Diagram: {escape(name.removeprefix('topology-').removesuffix('.svg'))} plane</h2>",
                    f'<div class="diagram">{svg}</div>',
                ]
        parts += _roce(plan, fabric)
    parts += _buffers(plan)  # compute and storage switches alike (an InfiniBand fabric's RoCE storage too)
    if fabric is not None:
        parts += _ports(fabric, plan.oob)
        parts += _cabling(fabric)
    head = f'<meta charset="utf-8"><title>{escape(plan.name)}: fabric report</title><style>{_STYLE}</style>'
    body = "\n".join(parts)
    return Report(f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head>\n<body>\n{body}\n<script>{_SCRIPT}</script>\n</body></html>\n', not lint)


def _table(headers: list[str], rows: list[list[object]], *, sortable: bool = False) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    cls = ' class="sortable"' if sortable else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


def _cell(value: object) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'<td class="num">{value:g}</td>' if isinstance(value, float) else f'<td class="num">{value}</td>'
    return f"<td>{escape('-' if value is None else str(value))}</td>"


def _warnings(warnings: tuple[Finding, ...] | list[Finding]) -> list[str]:
    if not warnings:
        return ["<h2>Validation warnings</h2>", '<p class="ok">none</p>']
    rows: list[list[object]] = [[f"{w.file or ''}:{w.line or ''}", w.dotted_path or "(top level)", w.message] for w in warnings]
    return ["<h2>Validation warnings</h2>", f'<p class="warn">{len(warnings)} warning(s)</p>', _table(["where", "path", "warning"], rows)]


def _lint(findings: list[str], fabric: FabricPlan | None, checked: int) -> str:
    if fabric is None:
        return "<p>no on-prem fabric: nothing to lint</p>"
    if not findings:
        return f'<p class="ok">clean: {checked} rendered switch configs agree with the RoCE contract and each other</p>'
    items = "".join(f"<li>{escape(f)}</li>" for f in findings)
    return f'<p class="bad">{len(findings)} finding(s)</p><ul>{items}</ul>'


def _plan_tables(plan: ClusterPlan) -> list[str]:
    used = Counter(i.plane for n in plan.nodes for i in n.interfaces if i.address)
    planes: list[list[object]] = [
        [p.name, p.transport, p.cidr, p.mtu, p.vlan, p.gateway if p.default_route else "none", used[p.name]] for p in plan.planes
    ]
    groups: dict[str, list[str]] = defaultdict(list)
    for node in plan.nodes:
        groups[node.group].append(node.hostname)
    first = {n.group: n for n in reversed(plan.nodes)}
    nodes: list[list[object]] = [
        [g, first[g].role, len(hosts), first[g].hardware, first[g].gpus * len(hosts), hosts[0], hosts[-1]] for g, hosts in groups.items()
    ]
    return [
        "<h2>Planes</h2>",
        _table(["plane", "transport", "cidr", "mtu", "vlan", "default route", "addresses"], planes),
        "<h2>Nodes</h2>",
        _table(["group", "role", "count", "hardware", "GPUs", "first", "last"], nodes),
    ]


def _fabric_tables(plan: ClusterPlan, fabric: FabricPlan) -> list[str]:
    rows: list[list[object]] = []
    for tier in fabric.tiers:
        sample = {"leaf": fabric.leaves, "spine": fabric.spines, "superspine": fabric.super_spines}[tier.tier]
        top = tier is fabric.tiers[-1]  # the fabric's cut sits at its top tier (spines, or super-spines on three tiers)
        bisection = fabric.bisection_gbps if top else min(tier.downlink_gbps, tier.uplink_gbps) * tier.switches // 2
        rows.append(
            [
                tier.tier,
                tier.switches,
                sample[0].model if sample else None,
                sample[0].nos if sample else None,
                f"{tier.ports_used_per_switch} / {tier.ports_per_switch}",
                tier.downlink_gbps,
                tier.uplink_gbps,
                tier.oversubscription,
                bisection,
            ]
        )
    headers = ["tier", "switches", "model", "NOS", "ports used / radix", "down Gb/s", "up Gb/s", "oversubscription", "bisection Gb/s"]
    figures = (
        f"{fabric.topology} {fabric.link_layer}; scalable units {fabric.scalable_units}, rails {fabric.rails}; "
        f"fabric bisection {fabric.bisection_gbps / 1000:g} Tb/s, oversubscription {fabric.oversubscription}; "
        f"MTU {', '.join(f'{p.name} {p.mtu}' for p in plan.planes)}"
    )
    return ["<h2>Fabric</h2>", f"<p>{escape(figures)}</p>", _table(headers, rows)]


def _roce(plan: ClusterPlan, fabric: FabricPlan) -> list[str]:
    """The contract as each hop implements it: what the NIC marks and expects, what leaf and spine honour."""
    if fabric.link_layer != "ethernet" or plan.plane("compute").transport != "roce":
        return []
    r = plan.roce

    def ecn_of(switches: tuple[SwitchPlan, ...]) -> str:
        b = plan.buffers_of(switches[0].name) if switches else None
        thresholds = f"{b.ecn_min.value}-{b.ecn_max.value} B" if b is not None else r.ecn.describe()
        return f"marks TC {r.traffic_class} at {thresholds}, {r.ecn.probability} %"

    watchdog = f"{r.pfc_watchdog.detection_ms} ms, {r.pfc_watchdog.action}" if r.pfc_watchdog.enabled else "off"
    pfc = f"PFC on priorities {list(r.pfc_priorities)}"
    mtu = plan.plane("compute").mtu
    tiers = (fabric.leaves, fabric.spines)
    rows: list[list[object]] = [
        [
            "link speed",
            f"{fabric.host_speed_gbps}G per NIC",
            f"{fabric.host_speed_gbps}G down, {fabric.uplink_speed_gbps}G up",
            f"{fabric.uplink_speed_gbps}G",
        ],
        ["MTU", f"{mtu} (compute plane)", f"{fabric.mtu} on every port", f"{fabric.mtu} on every port"],
        ["RoCE marking", f"DSCP {r.dscp} (ToS {r.effective_tos}), priority {r.priority}", "trust DSCP", "trust DSCP"],
        ["classification", "-", f"DSCP {r.dscp} → TC {r.traffic_class}, DSCP {r.cnp.dscp} → TC {r.cnp.traffic_class}", "same as leaf"],
        ["lossless", pfc, f"{pfc} on host ports and uplinks", f"{pfc} on every port"],
        ["congestion", f"DCQCN: sends CNP at DSCP {r.cnp.dscp}, priority {r.cnp.priority}", *(f"ECN {ecn_of(t)}" for t in tiers)],
        [
            "scheduling",
            "-",
            f"TC {r.traffic_class} {r.bandwidth_percent} % bandwidth, TC {r.cnp.traffic_class} {'strict' if r.cnp.strict else 'weighted'}",
            "same as leaf",
        ],
        ["PFC watchdog", "-", watchdog, watchdog],
    ]
    nics: list[list[object]] = [
        [n.group, f"{n.vendor} {n.model}", f"{n.cnp_dscp} / {n.cnp_priority}", ", ".join(n.sets) or "nothing"] for n in plan.nics
    ]
    return [
        "<h2>RoCE contract end to end</h2>",
        f"<p>{escape(r.summary())}</p>",
        _table(["", "NIC", f"leaf ({fabric.leaves[0].nos})", f"spine ({fabric.spines[0].nos})" if fabric.spines else "spine"], rows),
        *([_table(["group", "NIC model", "CNP DSCP / priority", "nic_qos sets"], nics)] if nics else []),
    ]


def _buffers(plan: ClusterPlan) -> list[str]:
    """Every derived ECN threshold and PFC headroom with its formula, inputs and source, compute-fabric and storage switches
    alike; switches alike share a row."""
    alike: dict[tuple[str, int, bool, str, str, str], list[str]] = {}
    for b in plan.buffers:
        for d in (b.ecn_min, b.ecn_max, *b.headroom):
            alike.setdefault((d.name, d.value, d.pinned, d.formula, d.inputs, d.source), []).append(b.switch)
    if not alike:
        return []
    rows: list[list[object]] = [
        [name, f"{value} B" + (" (pinned)" if pinned else ""), formula, inputs or "-", source, _names(switches)]
        for (name, value, pinned, formula, inputs, source), switches in alike.items()
    ]
    return ["<h3>Buffers: derived ECN thresholds and PFC headroom</h3>", _table(["value", "bytes", "formula", "inputs", "source", "switches"], rows)]


def _names(switches: list[str]) -> str:
    """``leaf01, leaf02 and 30 more``: a few names, then a count."""
    shown = ", ".join(switches[:3])
    return shown if len(switches) <= 3 else f"{shown} and {len(switches) - 3} more"


def _ports(fabric: FabricPlan, oob: OobPlan | None) -> list[str]:
    host: Counter[str] = Counter()
    up: Counter[str] = Counter()
    down: Counter[str] = Counter()
    for link in fabric.links:
        if link.kind == "host":
            host[link.a_device] += 1
        else:
            up[link.a_device] += 1
            down[link.b_device] += 1
    radix = {t.tier: t.ports_per_switch for t in fabric.tiers}
    rows: list[list[object]] = []
    for s in fabric.switches:
        used = host[s.name] + up[s.name] + down[s.name]
        total = radix.get(s.tier, 0)
        rows.append([s.name, s.tier, s.model, host[s.name] + down[s.name], up[s.name], used, total, round(100 * used / total, 1) if total else None])
    note: list[str] = []
    if oob is not None and oob.switches:
        access = Counter(x.a_device for x in oob.links if x.kind != "uplink")
        for m in oob.switches:
            total = m.ports_total + m.uplinks
            used = access[m.name] + m.uplinks
            rows.append([m.name, "oob", m.model, access[m.name], m.uplinks, used, total, round(100 * used / total, 1) if total else None])
        note = ["<p>OOB switches: the radix is their access ports plus their uplinks.</p>"]
    headers = ["switch", "tier", "model", "down ports", "up ports", "used", "radix", "utilisation %"]
    return ["<h2>Port utilisation per switch</h2>", *note, _table(headers, rows, sortable=True)]


def _cabling(fabric: FabricPlan) -> list[str]:
    by_leaf: dict[str, list[Link]] = defaultdict(list)
    for link in fabric.links:
        by_leaf[link.a_device].append(link)
    parts = ["<h2>Cabling per leaf</h2>", "<p>Click a column header to sort.</p>"]
    headers = ["leaf port", "peer", "peer port", "kind", "plane", "Gb/s", "cable m", "subnet", "leaf address", "peer address"]
    for leaf in sorted(by_leaf, key=natural_key):
        links = by_leaf[leaf]
        rows: list[list[object]] = [
            [x.a_port, x.b_device, x.b_port, x.kind, x.plane, x.speed_gbps, x.cable_m, x.subnet, x.a_address, x.b_address] for x in links
        ]
        kinds = Counter(x.kind for x in links)
        parts.append(
            f"<details><summary>{escape(leaf)}: {kinds['host']} host, {kinds['fabric']} fabric cables</summary>"
            f"{_table(headers, rows, sortable=True)}</details>"
        )
    return parts
