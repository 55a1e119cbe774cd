"""The report as a reviewer opens it: Debian's Chromium, headless, loads the page from disk, with nothing on its console.

Chromium writes every console message of the page (``console.*`` and uncaught exceptions) to stderr as
``INFO:CONSOLE...`` with ``--enable-logging=stderr`` (Chromium docs, "How to enable logging"); the page must log
nothing. The screenshot is a real rendering of the page, and a probe script appended to a copy of the page clicks the
sort headers and reports what it sees in ``--dump-dom`` output, so the page's own script is run, not only parsed.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from fabric.reports.html import build_report
from fabric.validate import validate_file
from tests.conftest import ROOT

WIDTH, HEIGHT = 1280, 900
PROBE = """<script>
(function () {
  var table = document.querySelector("table.sortable");
  var th = table.tHead ? table.tHead.rows[0].cells[0] : table.rows[0].cells[0];
  var first = function () { return table.tBodies[0].rows[0].cells[0].textContent; };
  th.click(); var asc = first();
  th.click(); var desc = first();
  var out = document.createElement("pre"); out.id = "probe";
  out.textContent = "svgs=" + document.querySelectorAll("svg").length + " asc=" + asc + " desc=" + desc +
    " order=" + th.getAttribute("data-order");
  document.body.appendChild(out);
})();
</script>"""


def _chromium() -> str:
    tool = shutil.which("chromium")
    assert tool, "chromium is missing: install Debian's chromium (./dev setup does)"
    return tool


def _run(page: Path, *flags: str, width: int = WIDTH) -> subprocess.CompletedProcess[str]:
    """One headless Chromium run on ``page`` (a file URL), its own profile, logging the page's console to stderr."""
    profile = page.parent / f"profile-{flags[0].lstrip('-').split('=')[0]}-{width}"
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",  # the tests may run as root, where Chromium refuses its sandbox
        "--disable-gpu",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        f"--window-size={width},{HEIGHT}",
        *flags,
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    validated = validate_file(ROOT / "inventories" / "onprem-roce" / "cluster.yaml")
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(build_report(validated.plan, validated.warnings).html, encoding="utf-8")
    return path


def test_chromium_renders_the_report_with_nothing_on_the_console(report: Path) -> None:
    shot = report.parent / "report.png"
    done = _run(report, f"--screenshot={shot}")
    assert _console(done.stderr) == []
    assert _png_size(shot) == (WIDTH, HEIGHT)
    assert shot.stat().st_size > 20_000, "the screenshot is (nearly) blank"


def test_the_sort_script_runs_in_the_browser(report: Path) -> None:
    probed = report.parent / "probed.html"
    probed.write_text(report.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    done = _run(probed, "--dump-dom")
    assert _console(done.stderr) == []
    found = re.search(r'<pre id="probe">svgs=(\d+) asc=(\S+) desc=(\S+) order=(\w+)</pre>', done.stdout)
    assert found, f"the probe did not run: {done.stdout[-500:]}"
    svgs, asc, desc, order = found.groups()
    assert int(svgs) >= 1
    assert asc != desc
    assert order == "desc"


FIT_PROBE = """<script>
(function () {
  var wider = 0, boxes = document.querySelectorAll(".diagram");
  for (var i = 0; i < boxes.length; i++) {
    var svg = boxes[i].querySelector("svg");
    if (svg.getBoundingClientRect().width > boxes[i].clientWidth + 0.5) { wider++; }
  }
  var out = document.createElement("pre"); out.id = "fit";
  out.textContent = "diagrams=" + boxes.length + " wider=" + wider;
  document.body.appendChild(out);
})();
</script>"""


@pytest.mark.parametrize(("scaled", "wider"), [(True, False), (False, True)])
def test_every_diagram_fits_the_window(report: Path, scaled: bool, wider: bool) -> None:
    """In a 900-px window every diagram is scaled to the report's width (no horizontal scroll, newcomer F16); without
    the report's `.diagram svg` rule (the control) the 1,178-px compute diagram is wider than its box."""
    page = report.read_text(encoding="utf-8")
    rule = ".diagram svg{max-width:100%;height:auto}"
    assert rule in page
    probed = report.parent / f"fit-{scaled}.html"
    probed.write_text((page if scaled else page.replace(rule, "")).replace("</body>", FIT_PROBE + "</body>"), encoding="utf-8")
    done = _run(probed, "--dump-dom", width=900)
    found = re.search(r'<pre id="fit">diagrams=(\d+) wider=(\d+)</pre>', done.stdout)
    assert found, f"the probe did not run: {done.stdout[-500:]}"
    assert int(found.group(1)) >= 3
    assert (int(found.group(2)) > 0) == wider


def test_a_page_error_would_be_seen(tmp_path: Path) -> None:
    """Control: the same run reports an exception thrown by a page."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><script>missingFunction();</script></body></html>", encoding="utf-8")
    done = _run(page, "--dump-dom")
    assert any("missingFunction" in line for line in _console(done.stderr))
