"""The HTML report, read back with html.parser: the sections a reviewer looks for, every switch, every cable, the
lint verdict and the validation warnings, and nothing fetched from elsewhere."""

from __future__ import annotations

import io
from html.parser import HTMLParser

import pytest
from rich.console import Console

from fabric.render.diagrams.topology import topology_svgs
from fabric.reports.console import print_plan
from fabric.reports.html import build_report
from fabric.validate import validate_file
from tests.conftest import ROOT
from tests.render.conftest import plan_of

SECTIONS = [
    "Validation warnings",
    "Lint",
    "Planes",
    "Nodes",
    "Fabric",
    "Diagram: compute plane",
    "RoCE contract end to end",
    "Port utilisation per switch",
    "Cabling per leaf",
]


class Page(HTMLParser):
    """Headings, tables (as rows of cell texts) and any attribute that would load something from elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.external: list[str] = []
        self.svgs = 0
        self._text: list[str] | None = None
        self._row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.external += [v for k, v in attrs if k in ("src", "href") and v and not v.startswith("#")]
        if tag == "svg":
            self.svgs += 1
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("h2", "td", "th"):
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self._text is not None:
            self.headings.append("".join(self._text))
        elif tag in ("td", "th") and self._text is not None and self._row is not None:
            self._row.append("".join(self._text))
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None
        if tag in ("h2", "td", "th"):
            self._text = None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def read(case: str) -> tuple[Page, str, bool]:
    validated = validate_file(ROOT / "inventories" / case / "cluster.yaml")
    report = build_report(validated.plan, validated.warnings)
    page = Page()
    page.feed(report.html)
    return page, report.html, report.lint_clean


@pytest.mark.parametrize("case", ["onprem-roce", "lab"])
def test_report_has_every_section_switch_and_cable(case: str) -> None:
    page, html, clean = read(case)
    plan = validate_file(ROOT / "inventories" / case / "cluster.yaml").plan
    assert plan.fabric is not None
    diagrams = [f"Diagram: {p} plane" for p in topology_svgs(plan)]
    assert page.headings == [h for h in SECTIONS if not h.startswith("Diagram")][:5] + diagrams + SECTIONS[6:]
    assert clean
    assert "clean: " in html
    ports = next(t for t in page.tables if t[0][:2] == ["switch", "tier"])
    oob = [s.name for s in plan.oob.switches] if plan.oob is not None else []
    assert [row[0] for row in ports[1:]] == [s.name for s in plan.fabric.switches] + oob
    cabling = [t for t in page.tables if t[0][0] == "leaf port"]
    assert sum(len(t) - 1 for t in cabling) == len(plan.fabric.links)
    assert page.svgs == len(diagrams)
    assert page.external == [], "the page is self-contained"


def test_report_shows_the_roce_contract_per_hop_and_port_use() -> None:
    page, _, _ = read("onprem-roce")
    roce = {row[0]: row[1:] for row in next(t for t in page.tables if t[0][1:] == ["NIC", "leaf (sonic)", "spine (sonic)"])}
    assert roce["RoCE marking"][0] == "DSCP 26 (ToS 106), priority 3"
    assert roce["lossless"][1] == "PFC on priorities [3] on host ports and uplinks"
    assert roce["MTU"] == ["9000 (compute plane)", "9216 on every port", "9216 on every port"]
    ports = {row[0]: row for row in next(t for t in page.tables if t[0][:2] == ["switch", "tier"])}
    assert ports["leaf-su01-r1"][3:] == ["32", "32", "64", "128", "50"]
    assert ports["spine01"][3:] == ["128", "0", "128", "128", "100"]
    assert ports["oob-su1"][1:] == ["oob", "sn2201", "42", "2", "44", "50", "88"]  # 32 BMCs + 8 leaves' + 2 storage leaves' mgmt, 2 uplinks


def test_report_lists_validation_warnings() -> None:
    page, html, _ = read("onprem-ib")
    warnings = next(t for t in page.tables if t[0] == ["where", "path", "warning"])
    assert any(row[1] == "infiniband.subnet_manager.kind" for row in warnings[1:])
    assert "RoCE contract end to end" not in page.headings  # InfiniBand: no RoCE section
    assert "1 warning(s)" in html


def test_report_is_byte_identical_across_runs() -> None:
    assert read("onprem-roce")[1] == read("onprem-roce")[1]


def test_report_shows_each_derived_buffer_value_with_formula_and_inputs() -> None:
    page, _, _ = read("lab")  # the lab pins no ECN threshold: every value is derived (fabric.plan.buffers)
    table = next(t for t in page.tables if t[0] == ["value", "bytes", "formula", "inputs", "source", "switches"])
    rows = {(row[0], row[3]): row for row in table[1:]}
    headroom = rows[("pfc_headroom", "speed 100 Gb/s, cable 40 m, MTU 9216 B, 2 ports")]
    assert headroom[1] == "63767 B"
    assert headroom[2].startswith("(301 + 216*cable_m/100) * speed_Gbps + 272*MTU/100")
    assert "calculate_xoff" in headroom[4]
    assert rows[("ecn_min", "-")][1:3] == ["150000 B", "NVIDIA's qos roce default at every speed"]
    roce = {row[0]: row[1:] for row in next(t for t in page.tables if t[0][0] == "" and t[0][1] == "NIC")}
    assert roce["congestion"][1] == "ECN marks TC 3 at 150000-1500000 B, 100 %"


def test_report_shows_storage_switch_buffers_on_an_infiniband_fabric() -> None:
    page, _, _ = read("onprem-ib")  # compute is InfiniBand (no RoCE contract table); storage runs RoCE
    table = next(t for t in page.tables if t[0] == ["value", "bytes", "formula", "inputs", "source", "switches"])
    rows = {(row[0], row[3]): row for row in table[1:]}
    headroom = rows[("pfc_headroom", "speed 200 Gb/s, cable 30 m, MTU 9000 B, 16 ports")]
    assert headroom[5] == "stor-spine-a, stor-spine-b"


def test_the_report_and_the_plan_table_name_each_groups_nic_and_what_the_roles_set() -> None:
    """Issue 34: a reader sees which NIC each RoCE group has and what nic_qos changes on it."""
    plan = plan_of("render/mixed-nic")
    report = build_report(plan, [])
    assert report.lint_clean
    assert "<td>amd</td><td>broadcom thor2</td><td>48 / 6</td><td>cnp_priority</td>" in report.html
    out = io.StringIO()
    print_plan(Console(file=out, width=200), plan)
    assert "│ amd   │ broadcom thor2    │ 26 / 3               │ 48 / 6              │ cnp_priority (bnxt)" in out.getvalue()
