"""A BFD timer change and its rollback go through FRR's own parser: FRR 8.4 has no ``no`` form for the timers."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fabric.apply.diff import remediation
from tests.render.conftest import files_of

DEFAULT = files_of("lab")["switches/leaf01/frr.conf"]


def with_timers(interval: int, multiplier: int) -> str:
    """The lab leaf's frr.conf with the BFD profile's timers set (what the template renders for non-default timers)."""
    timers = f"  detect-multiplier {multiplier}\n  receive-interval {interval}\n  transmit-interval {interval}\n"
    assert " profile FABRIC\n" in DEFAULT
    return DEFAULT.replace(" profile FABRIC\n", " profile FABRIC\n" + timers, 1)


def frr_accepts(running: str, change: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Feed FRR's parser the running config, then the change, as vtysh would run them in config mode."""
    vtysh = shutil.which("vtysh")
    assert vtysh, "FRR is missing: ./dev installs the frr package (run it as root)"
    conf = tmp_path / "frr.conf"
    conf.write_text(running + "\n" + "\n".join(change) + "\n", encoding="utf-8")
    return subprocess.run([vtysh, "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=30, check=False)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (with_timers(200, 5), DEFAULT),  # the rollback of a timer change: back to the defaults the template leaves out
        (DEFAULT, with_timers(200, 5)),
        (with_timers(200, 5), with_timers(150, 4)),
    ],
    ids=["back-to-default", "from-default", "new-values"],
)
def test_frr_parses_every_bfd_timer_change(before: str, after: str, tmp_path: Path) -> None:
    change = remediation(before, after)
    assert change, "the two configs differ, so there must be a change"
    assert not [line for line in change if re.match(r"\s*no (detect-multiplier|receive-interval|transmit-interval)\b", line)]
    result = frr_accepts(before, change, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_back_to_default_sets_the_defaults_frr_documents() -> None:
    change = remediation(with_timers(200, 5), DEFAULT)
    assert {line.strip() for line in change} >= {"detect-multiplier 3", "receive-interval 300", "transmit-interval 300"}


def test_frr_refuses_the_negation_hier_config_would_send(tmp_path: Path) -> None:
    """The control: FRR 8.4 answers "% Unknown command" to the plain negation, so the rewrite is needed."""
    result = frr_accepts(with_timers(200, 5), ["bfd", " profile FABRIC", "  no transmit-interval 200", "  exit", "exit"], tmp_path)
    assert result.returncode != 0
    assert "no transmit-interval" in result.stdout + result.stderr
