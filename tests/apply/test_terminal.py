"""Device text reaches the terminal with its control characters escaped (issue 30): a switch cannot move the cursor,
erase a line or hide a diff line from the person approving it."""

from __future__ import annotations

import argparse
import io
import json
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from fabric.__main__ import main
from fabric.apply.checks.verify import DeviceVerdict
from fabric.apply.push import candidates
from fabric.apply.terminal import visible
from fabric.apply.transaction import PushResult
from fabric.cli import apply as cli
from fabric.cli.common import console
from fabric.errors import FabricError, PushError
from fabric.validate import validate_file
from tests.conftest import ROOT

LAB = ROOT / "inventories" / "lab" / "cluster.yaml"
HOSTILE = ["\x1b[2K\r", "\x1b[1A\x1b[2K", "\x9b2K", "\x07\x08\x7f", "\u202e", "\x1b]0;owned\x07", "\x00", "\u2028", "\\x1b"]
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def unescape(text: str) -> str:
    """The inverse of ``visible``: proof that the escaping loses nothing and cannot be forged."""
    named = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}

    def one(match: re.Match[str]) -> str:
        kind = match.group(1)
        return named[kind] if kind in named else chr(int(match.group(2), 16))

    pattern = r"\\([tnr\\]|[xuU])((?<=x)[0-9a-f]{2}|(?<=u)[0-9a-f]{4}|(?<=U)[0-9a-f]{8})?"
    return re.sub(pattern, one, text)


@given(st.text(alphabet=st.characters(codec=None), max_size=200) | st.lists(st.sampled_from([*HOSTILE, "ok", " ", "é"])).map("".join))
def test_visible_text_holds_no_control_character_and_reads_back_exactly(text: str) -> None:
    shown = visible(text)
    assert shown.isprintable(), "every C0/C1 control, DEL, bidi override and separator is escaped"
    assert not CONTROL.search(shown)
    assert unescape(shown) == text
    if text.isprintable() and "\\" not in text:
        assert shown is text, "printable text passes untouched"


def test_what_an_operator_sees() -> None:
    assert visible("no hostname evil\x1b[1A\x1b[2K") == "no hostname evil\\x1b[1A\\x1b[2K"
    assert visible("a\tb\r\n\x9b\u202e") == "a\\tb\\r\\n\\x9b\\u202e"
    assert visible("description café ünïcode") == "description café ünïcode"
    assert unicodedata.category(visible("\U000e0001")[0]) == "Po"  # a tag character: shown as \U000e0001


@pytest.fixture
def hostile_record(tmp_path: Path) -> Path:
    """A change record saying leaf01 runs lines with escape sequences in them: what a compromised switch would return."""
    plan = validate_file(LAB).plan
    running = candidates(plan, ["compute"])["leaf01"]
    folder = tmp_path / "changes" / "20260101T000000000000Z"
    folder.mkdir(parents=True)
    hostile = "".join(f"hostname evil{seq}\n" for seq in HOSTILE)
    (folder / "leaf01.before").write_text(running + hostile, encoding="utf-8")
    return tmp_path


def test_an_offline_diff_shows_the_escape_sequences_escaped(hostile_record: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(LAB), "--offline", "--state", str(hostile_record), "--plane", "compute"]) == 3
    out = capsys.readouterr().out
    assert not CONTROL.search(out.replace("\n", "")), "no control character from the device reaches the terminal"
    assert "    no hostname evil\\x1b[2K\n" in out  # the config parser ends the line at the CR
    assert "    no hostname evil\\x1b[1A\\x1b[2K" in out
    assert "    no hostname evil\\x9b2K" in out
    assert "    no hostname evil\\\\x1b" in out, "a device cannot forge an escape: its backslash is shown doubled"


def test_json_output_is_ascii_and_keeps_the_device_text_exactly(hostile_record: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(LAB), "--offline", "--state", str(hostile_record), "--plane", "compute", "--json"]) == 3
    out = capsys.readouterr().out
    assert out.isascii()
    assert not CONTROL.search(out.replace("\n", ""))
    diff = json.loads(out)["devices"]["leaf01"]["diff"]
    assert "no hostname evil\x1b[1A\x1b[2K" in diff
    assert "no hostname evil\x9b2K" in diff


def test_verify_and_errors_show_device_text_escaped() -> None:
    stream = io.StringIO()
    out: Console = console(stream)
    cli._print_verdicts(out, [DeviceVerdict("leaf01", drift=["hostname x\x1b[1A\x1b[2K"], problems=["BGP peer \x1b]0;t\x07 down"])])
    result = PushResult("leaf01", changed=True, diff=["hostname y\r\x1b[2K"], error="% Invalid input\x1b[2K\r\nline two\x9b")
    cli._report(argparse.Namespace(json=False), out, "c1", [result])
    shown = stream.getvalue()
    assert not CONTROL.search(shown.replace("\n", ""))
    for expected in (
        "drift: hostname x\\x1b[1A\\x1b[2K",
        "BGP peer \\x1b]0;t\\x07 down",
        "hostname y\\r\\x1b[2K",
        "% Invalid input\\x1b[2K\\r",
        "    line two\\x9b",
    ):
        assert expected in shown


@pytest.mark.parametrize("error", [PushError, FabricError])
def test_an_error_quoting_a_device_is_shown_escaped(
    error: type[FabricError], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(*_: object) -> None:
        msg = "leaf01 answered: % Denied\x1b[1A\x1b[2K\rall good"
        raise error(msg)

    monkeypatch.setattr(cli, "offline_diff", failing)
    assert main(["diff", str(LAB), "--offline", "--state", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert not CONTROL.search(err.replace("\n", ""))
    assert "% Denied\\x1b[1A\\x1b[2K\\rall good" in err.replace("\n", "")
