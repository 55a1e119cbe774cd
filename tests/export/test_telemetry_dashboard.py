"""The Grafana dashboard's structure, against Grafana's dashboard JSON model
(grafana.com/docs/grafana/latest/dashboards/build-dashboards/view-dashboard-json-model/: panel ``id``, ``gridPos``
``x``/``y``/``w``/``h`` on a 24-column grid; ``templating.list`` for variables): unique ids, panels inside the grid
and not overlapping, the datasource variable on every panel and query, and every metric an expression names produced
by the exported scrape and gnmic configs (gnmic's names derived here from ``gnmic.yaml``'s paths and
``prometheus.yml``'s relabelling). Each check is shown to catch a broken dashboard."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from fabric.export.telemetry import export_telemetry
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import DATA, EXAMPLES
from tests.export.promseries import gnmic_series

DEFINITIONS = [e for e in EXAMPLES if e.parent.name.startswith(("onprem", "lab"))] + [
    DATA / "render/eos-3tier/cluster.yaml",
    DATA / "render/cumulus-3tier/cluster.yaml",
    DATA / "render/nxos-3tier/cluster.yaml",
]
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
# Exporter metrics by the scrape job that serves them, as the exporters name them: node_exporter's ethtool collector
# (node_ethtool_<stat>, rx/tx spelled received/transmitted; mlx5 rx_prioN_pause), infiniband and rdma collectors
# (<name>_total); dcgm-exporter's DCGM_FI_* fields; frr_exporter's frr_bgp_*.
EXPORTERS = {
    "gpufabric-nodes": re.compile(r"node_ethtool_(received|transmitted)_prio[0-7]_pause|node_infiniband_[a-z_]+_total|node_rdma_mlx5_[a-z_]+_total"),
    "gpufabric-dcgm": re.compile(r"DCGM_FI_[A-Z_]+"),
    "gpufabric-frr": re.compile(r"frr_bgp_[a-z_]+"),
}
_KEYWORDS = {"or", "and", "unless", "bool", "offset"}


def _metrics(expr: str) -> tuple[list[str], list[str]]:
    """The metric names an expression selects, and its ``__name__=~`` regexes."""
    regexes = re.findall(r'__name__=~"([^"]*)"', expr)
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\"[^\"]*\"", " ", expr)
    bare = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", bare)
    names = [n for n in re.findall(r"\b([A-Za-z_:][A-Za-z0-9_:]*)\b(?!\s*\()", bare) if n not in _KEYWORDS]
    return names, regexes


def _produced(files: dict[str, str]) -> tuple[set[str], set[str], set[str]]:
    """(gnmic series, recorded series, scrape jobs) of an export."""
    scrape = files["telemetry/prometheus.yml"]
    gnmic = gnmic_series(files["telemetry/gnmic.yaml"], scrape) if "telemetry/gnmic.yaml" in files else set()
    rules = yaml.safe_load(files["telemetry/alerts.yml"])["groups"]
    recorded = {r["record"] for g in rules for r in g["rules"] if "record" in r}
    # the plan's link labels (telemetry/link-labels.prom, served by a textfile collector): what its samples are named
    recorded |= set(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{", files.get("telemetry/link-labels.prom", ""), re.MULTILINE))
    jobs = {j["job_name"] for j in yaml.safe_load(scrape)["scrape_configs"]}
    return gnmic, recorded, jobs


def _overlap(a: dict[str, int], b: dict[str, int]) -> bool:
    return a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


def problems(dashboard: dict[str, object], files: dict[str, str]) -> list[str]:
    """Every structural problem of the dashboard, and every metric no exported config produces."""
    found: list[str] = []
    panels = dashboard["panels"]
    assert isinstance(panels, list)
    ids = [p["id"] for p in panels]
    found += [f"panel id {i} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for p in panels:
        g = p["gridPos"]
        if not (g["x"] >= 0 and g["w"] >= 1 and g["x"] + g["w"] <= 24 and g["h"] >= 1 and g["y"] >= 0):
            found.append(f"panel {p['id']} lies outside the 24-column grid: {g}")
    found += [
        f"panels {a['id']} and {b['id']} overlap" for i, a in enumerate(panels) for b in panels[i + 1 :] if _overlap(a["gridPos"], b["gridPos"])
    ]
    variables = dashboard.get("templating", {}).get("list", [])  # type: ignore[union-attr]
    if not any(v.get("name") == "datasource" and v.get("type") == "datasource" and v.get("query") == "prometheus" for v in variables):
        found.append("no datasource variable of type datasource for Prometheus")
    gnmic, recorded, jobs = _produced(files)
    for p in panels:
        if p["type"] == "row":
            continue
        for owner in [p, *p["targets"]]:
            if owner["datasource"] != DATASOURCE:
                found.append(f"panel {p['id']} does not use the datasource variable: {owner['datasource']}")
        for target in p["targets"]:
            names, regexes = _metrics(target["expr"])
            found += [f"panel {p['id']}: {r!r} matches no gnmic series" for r in regexes if not any(re.fullmatch(r, n) for n in gnmic)]
            for name in names:
                if not (name in gnmic or name in recorded or any(job in jobs and rx.fullmatch(name) for job, rx in EXPORTERS.items())):
                    found.append(f"panel {p['id']}: {name} is produced by no exported config")
    return found


def _export(definition: Path) -> tuple[dict[str, object], dict[str, str]]:
    plan = plan_cluster(load_cluster(definition))
    files = export_telemetry(plan)
    return json.loads(files[f"telemetry/grafana-{plan.name}.json"]), files


@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda p: p.parent.name)
def test_the_dashboard_is_well_formed_and_reads_only_produced_metrics(definition: Path) -> None:
    dashboard, files = _export(definition)
    assert problems(dashboard, files) == []


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) is not installed (./dev setup)")
@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda p: p.parent.name)
def test_promtool_parses_every_panel_expression(definition: Path, tmp_path: Path) -> None:
    """Each expression as a recording rule: ``promtool check rules`` parses it with Prometheus' own PromQL parser."""
    dashboard, _ = _export(definition)
    panels = dashboard["panels"]
    assert isinstance(panels, list)
    exprs = [t["expr"] for p in panels for t in p.get("targets", [])]
    rules = {"groups": [{"name": "dashboard", "rules": [{"record": f"dashboard:expr_{i}", "expr": e} for i, e in enumerate(exprs)]}]}
    (tmp_path / "exprs.yml").write_text(yaml.safe_dump(rules, width=1000), encoding="utf-8")
    promtool = shutil.which("promtool")
    assert promtool is not None
    result = subprocess.run([promtool, "check", "rules", "exprs.yml"], capture_output=True, text=True, cwd=tmp_path, check=False, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in result.stdout


@pytest.mark.parametrize("definition", DEFINITIONS[1:], ids=lambda p: p.parent.name)
def test_every_switch_tier_has_its_row_with_the_signals_its_nos_feeds(definition: Path) -> None:
    dashboard, _ = _export(definition)
    panels = dashboard["panels"]
    assert isinstance(panels, list)
    plan = plan_cluster(load_cluster(definition))
    assert plan.fabric is not None
    tiers = sorted({s.tier for s in plan.fabric.switches}) if plan.fabric.link_layer == "ethernet" else []
    rows = [i for i, p in enumerate(panels) if p["type"] == "row"]
    for tier in tiers:
        start = next(i for i in rows if panels[i]["title"].startswith(f"{tier.capitalize()} tier ("))
        end = next((i for i in rows if i > start), len(panels))
        titles = [p["title"] for p in panels[start + 1 : end]]
        exprs = " ".join(t["expr"] for p in panels[start + 1 : end] for t in p["targets"])
        names = sorted(s.name for s in plan.fabric.switches if s.tier == tier)
        assert f'source=~"{"|".join(names)}"' in exprs or all(s.nos == "frr" for s in plan.fabric.switches), tier
        nos = {s.nos for s in plan.fabric.switches}
        if nos & {"eos", "cumulus", "sonic", "nxos"}:
            assert "BGP sessions established and down" in titles
        if nos & {"eos", "cumulus", "sonic"}:
            assert any(t.startswith("PFC pauses on priority") for t in titles)
        if nos & {"eos", "cumulus", "sonic", "nxos"}:
            assert "ECN-marked packets" in titles
            assert "Queue and buffer watermark" in titles


def test_the_rail_optimized_fabric_gets_a_leaf_side_row_per_rail() -> None:
    dashboard, _ = _export(DEFINITIONS[[d.parent.name for d in DEFINITIONS].index("onprem-roce")])
    panels = dashboard["panels"]
    assert isinstance(panels, list)
    row = next(i for i, p in enumerate(panels) if p["type"] == "row" and p["title"].startswith("Leaf side per rail"))
    pauses = panels[row + 1]
    assert pauses["title"] == "PFC pauses received per rail"
    assert [t["legendFormat"] for t in pauses["targets"]] == [f"rail {r}" for r in range(1, 9)]
    assert 'source=~"leaf-su01-r3|leaf-su02-r3"' in pauses["targets"][2]["expr"]


def _break(dashboard: dict[str, object], how: str) -> dict[str, object]:
    broken = copy.deepcopy(dashboard)
    panels = broken["panels"]
    assert isinstance(panels, list)
    last = panels[-1]
    if how == "duplicate id":
        last["id"] = panels[0]["id"]
    elif how == "overlap":
        last["gridPos"] = dict(panels[-2]["gridPos"])
    elif how == "off grid":
        last["gridPos"] = {**last["gridPos"], "x": 20, "w": 12}
    elif how == "literal datasource":
        last["targets"][0]["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
    elif how == "no variable":
        broken["templating"] = {"list": []}
    elif how == "unknown metric":
        last["targets"][0]["expr"] = "sum(rate(gnmic_interfaces_interface_state_counters_in_octets[5m]))"
    elif how == "unknown regex":
        last["targets"][0]["expr"] = 'sum(rate({__name__=~"gnmic_(device_)?System_nothing"}[5m]))'
    return broken


@pytest.mark.parametrize("how", ["duplicate id", "overlap", "off grid", "literal datasource", "no variable", "unknown metric", "unknown regex"])
def test_each_check_catches_a_broken_dashboard(how: str) -> None:
    dashboard, files = _export(DATA / "render/nxos-3tier/cluster.yaml")
    assert len(problems(_break(dashboard, how), files)) >= 1
