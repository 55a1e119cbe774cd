"""The dataclass methods' compile cache (``fabric/classcode.py``): the code a compile of the same text gives, never a
stale entry, only private whole files read, written only by the process that installed it.

Each case runs in a fresh interpreter with its own ``XDG_CACHE_HOME``: the cache is installed by ``import fabric``.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path
from typing import TypedDict, cast

import pytest

ROOT = Path(__file__).resolve().parent.parent

REPORT = """
import json, dataclasses
from fabric import classcode
same = all(code == compile(text, "<string>", "eval" if label == classcode.FORWARD_REFS else "exec", dont_inherit=True)
           for label, used in classcode._used.items() for text, code in used.items())
print(json.dumps({"missed": sorted(classcode._missed), "used": sum(map(len, classcode._used.values())), "same": same,
                  "installed": getattr(dataclasses, "exec", None) is classcode._exec}))
"""


class Report(TypedDict):
    """What ``REPORT`` prints of a run."""

    missed: list[str]
    used: int
    same: bool
    installed: bool


def _run(cache: Path, code: str, *, extra: Path | None = None, **env: str) -> Report:

    path = os.pathsep.join(str(p) for p in (ROOT, extra) if p)
    done = subprocess.run(
        [sys.executable, "-c", code + REPORT],
        cwd=ROOT,
        env={**os.environ, "GPUFABRIC_NO_CACHE": "0", "XDG_CACHE_HOME": str(cache), "PYTHONPATH": path, **env},
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return cast("Report", json.loads(done.stdout.splitlines()[-1]))


def _shapes(folder: Path, body: str) -> Path:
    """A module ``shapes`` (a caller's own, imported after fabric) holding ``body``."""
    folder.mkdir(exist_ok=True)
    (folder / "shapes.py").write_text(f"from dataclasses import dataclass, field\n\n{body}", encoding="utf-8")
    return folder


def _files(cache: Path) -> dict[str, Path]:
    return {p.name.split(".cpython")[0]: p for p in (cache / "gpufabric" / "classes").iterdir()}


def test_the_second_process_compiles_nothing_and_runs_the_code_of_the_same_text(tmp_path: Path) -> None:
    cold = _run(tmp_path, "import fabric.plan")
    assert cold["installed"]
    assert "fabric.plan.types" in cold["missed"]
    assert cold["same"]
    folder = tmp_path / "gpufabric" / "classes"
    assert folder.stat().st_mode & 0o777 == 0o700
    assert {p.stat().st_mode & 0o777 for p in folder.iterdir()} == {0o600}
    warm = _run(tmp_path, "import fabric.plan")
    assert warm["missed"] == []
    assert warm["used"] == cold["used"]
    assert warm["same"], "a cached method is not the compile of its text"


def test_forward_references_are_cached_and_other_compiles_pass_through(tmp_path: Path) -> None:
    code = (
        "import typing, fabric.plan\n"
        "assert typing.get_type_hints(type('T', (), {'__annotations__': {'a': 'int | None'}})) == {'a': int | None}\n"
        "namespace = {}\n"
        "exec(typing.compile('def f(a: int): pass', '<s>', 'exec'), namespace)\n"
        "assert namespace['f'].__annotations__ == {'a': int}, 'a caller of typing.compile got our __future__ flags'\n"
    )
    cold = _run(tmp_path, code)
    assert "typing-forward-refs" in cold["missed"]
    warm = _run(tmp_path, code)
    assert warm["missed"] == []
    assert warm["same"]


def test_a_changed_class_is_compiled_afresh_never_served_stale(tmp_path: Path) -> None:
    code = "import fabric, shapes; print(shapes.P(1))"
    extra = _shapes(tmp_path / "src", "@dataclass(frozen=True)\nclass P:\n    x: int\n")
    assert "shapes" in _run(tmp_path, code, extra=extra)["missed"]
    assert _run(tmp_path, code, extra=extra)["missed"] == []
    _shapes(tmp_path / "src", "@dataclass(frozen=True)\nclass P:\n    x: int\n    y: int = 2\n")
    check = "import fabric, shapes; assert shapes.P(1) == shapes.P(1, 2) and repr(shapes.P(1)) == 'P(x=1, y=2)'"
    after = _run(tmp_path, check, extra=extra)
    assert after["missed"] == ["shapes"]
    assert after["same"]


def test_annotations_stay_types_cold_and_warm(tmp_path: Path) -> None:
    """``classcode`` has ``from __future__ import annotations``; a compile that inherited it would make them strings."""
    extra = _shapes(tmp_path / "src", "@dataclass\nclass P:\n    x: int\n    tags: list = field(default_factory=list)\n")
    check = "import fabric, shapes; assert shapes.P.__init__.__annotations__ == {'x': int, 'tags': list, 'return': None}"
    assert "shapes" in _run(tmp_path, check, extra=extra)["missed"]
    assert _run(tmp_path, check, extra=extra)["missed"] == []


def _plant(entry: Path, marker: Path, *, digest: bytes | None = None) -> None:
    """Replace every code object of ``entry`` by one that also touches ``marker``, with a valid checksum (or ``digest``)."""
    payload = entry.read_bytes()[32:]
    texts = marshal.loads(payload)
    evil = {text: compile(f"open({str(marker)!r}, 'w').close()\n{text}", "<string>", "exec") for text in texts}
    data = marshal.dumps(evil)
    entry.write_bytes((digest or hashlib.sha256(data).digest()) + data)


@pytest.mark.parametrize("hostile", ["none (the control: a private entry is read)", "group-writable", "a link", "world-writable directory"])
def test_only_a_private_entry_in_a_private_directory_is_run(tmp_path: Path, hostile: str) -> None:
    extra = _shapes(tmp_path / "src", "@dataclass(frozen=True)\nclass P:\n    x: int\n")
    code = "import fabric, shapes; shapes.P(1)"
    _run(tmp_path, code, extra=extra)
    entry = _files(tmp_path)["shapes"]
    marker = tmp_path / "MARKER"
    _plant(entry, marker)
    if hostile == "group-writable":
        entry.chmod(0o620)
    elif hostile == "a link":
        entry.rename(tmp_path / "elsewhere")
        entry.symlink_to(tmp_path / "elsewhere")
    elif hostile == "world-writable directory":
        entry.parent.chmod(0o777)
    after = _run(tmp_path, code, extra=extra)
    if hostile.startswith("none"):
        assert marker.exists(), "the planted entry was not read: this test could not fail"
        assert after["missed"] == []
    else:
        assert not marker.exists(), "code from an entry others can write ran"
        assert after["missed"] == ([] if hostile == "world-writable directory" else ["shapes"])
        assert after["installed"] == (hostile != "world-writable directory")


@pytest.mark.parametrize("keep", [0, 10, 40, -5], ids=["empty", "part-of-the-checksum", "just-past-it", "the-last-bytes-cut"])
def test_a_damaged_file_is_compiled_and_written_again(tmp_path: Path, keep: int) -> None:
    code = "import fabric.plan"
    _run(tmp_path, code)
    entry = _files(tmp_path)["fabric.plan.types"]
    entry.write_bytes(entry.read_bytes()[:keep])
    after = _run(tmp_path, code)
    assert "fabric.plan.types" in after["missed"]
    assert len(entry.read_bytes()) > max(keep, 0), "written again"
    assert _run(tmp_path, code)["missed"] == []


def test_contents_that_do_not_match_their_checksum_are_not_run(tmp_path: Path) -> None:
    """Whole, marshal-readable, private, but not what was written (the checksum of the old contents): not run."""
    extra = _shapes(tmp_path / "src", "@dataclass(frozen=True)\nclass P:\n    x: int\n")
    code = "import fabric, shapes; shapes.P(1)"
    _run(tmp_path, code, extra=extra)
    entry = _files(tmp_path)["shapes"]
    marker = tmp_path / "MARKER"
    _plant(entry, marker, digest=entry.read_bytes()[:32])
    assert _run(tmp_path, code, extra=extra)["missed"] == ["shapes"]
    assert not marker.exists()


def test_a_flipped_byte_is_a_miss(tmp_path: Path) -> None:
    _run(tmp_path, "import fabric.plan")
    entry = _files(tmp_path)["fabric.plan.types"]
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))
    assert "fabric.plan.types" in _run(tmp_path, "import fabric.plan")["missed"]


def test_off_with_gpufabric_no_cache(tmp_path: Path) -> None:
    done = _run(tmp_path, "import fabric.plan", GPUFABRIC_NO_CACHE="1")
    assert not done["installed"]
    assert not (tmp_path / "gpufabric").exists()


def test_a_forked_child_never_writes(tmp_path: Path) -> None:
    """A render worker is forked with the parent's exit hook; a class it made must not be saved by it."""
    extra = _shapes(tmp_path / "src", "@dataclass\nclass P:\n    x: int\n")
    code = "import os, sys, fabric\npid = os.fork()\nif pid == 0:\n    import shapes\n    sys.exit(0)\nos.waitpid(pid, 0)\n"
    _run(tmp_path, code, extra=extra)
    assert "shapes" not in _files(tmp_path)


def test_a_scripts_main_is_not_cached(tmp_path: Path) -> None:
    code = "import fabric\nfrom dataclasses import dataclass\n@dataclass\nclass Q:\n    x: int\nassert Q(1) == Q(1)\n"
    done = _run(tmp_path, code)
    assert "__main__" not in done["missed"]
    assert "__main__" not in _files(tmp_path)


def test_uninstall_gives_the_builtins_back(tmp_path: Path) -> None:
    code = (
        "import dataclasses, typing, fabric\n"
        "from fabric import classcode\n"
        "assert dataclasses.exec is classcode._exec and typing.compile is classcode._compile\n"
        "classcode.uninstall()\n"
        "assert not hasattr(dataclasses, 'exec') and not hasattr(typing, 'compile')\n"
    )
    done = _run(tmp_path, code)
    assert not done["installed"]
    assert done["used"] == 0
