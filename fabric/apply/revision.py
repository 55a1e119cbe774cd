"""The git revision a definition is at, for the change record, without trusting the definition's directory.

A repository's own files are code: ``.git/config`` names programs git runs (``core.fsmonitor`` on every index refresh,
``diff.external``, ``filter.*.clean`` through ``.gitattributes``, ``core.sshCommand``, hooks), so ``git diff`` or
``git status`` in a directory someone else prepared runs their program as the operator (issue 30). Nothing here runs
git in that directory or reads its config:

- the commit comes from reading ``HEAD``, the loose ref and ``packed-refs`` as text (git's own layout,
  gitrepository-layout(5)); a linked worktree's ``.git`` file and ``commondir`` are followed;
- the definition's blob id at that commit comes from ``git cat-file --batch-check`` run with a private, empty
  ``GIT_DIR`` whose config this module writes, the repository's objects given as ``GIT_OBJECT_DIRECTORY``, no system or
  global config, ``HOME`` in the private directory and a minimal ``PATH``: git reads objects there, and nothing else;
- the file's own blob id is computed here (``blob <size>\\0<bytes>``, SHA-1 or SHA-256 as the commit id's length says)
  and compared: the raw bytes, without git's filters (those are programs from the directory too), so a checkout
  with ``autocrlf`` or a clean filter may read as ``+dirty`` where ``git diff`` would not.

Any surprise (no git, a ref that is not there, a timeout) gives None: the revision is a note in the record, never a
reason to stop a push.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

GIT_TIMEOUT_S = 10
_OBJECT_ID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_REF = re.compile(r"^refs/[A-Za-z0-9._/-]+$")


def definition_revision(definition: Path) -> str | None:
    """The commit the definition's checkout is at, with ``+dirty`` when the file's bytes differ from that commit's."""
    with contextlib.suppress(OSError, ValueError, subprocess.SubprocessError):
        path = definition.resolve()
        found = _repository(path.parent)
        if found is None:
            return None
        top, git_dir, common = found
        commit = _head(git_dir, common)
        if commit is None:
            return None
        data = path.read_bytes()
        stored = _blob_at(common / "objects", commit, path.relative_to(top).as_posix())
        if stored is None:  # git could not be asked: the commit alone would claim a clean file
            return None
        return commit + ("" if stored == _blob_id(data, len(commit)) else "+dirty")
    return None


def _repository(start: Path) -> tuple[Path, Path, Path] | None:
    """(work tree top, git dir, common dir) of the checkout holding ``start``, found as git finds it: the nearest ``.git``."""
    for top in (start, *start.parents):
        dot_git = top / ".git"
        if dot_git.is_dir():
            return top, dot_git, dot_git
        if dot_git.is_file():  # a linked worktree or a submodule: "gitdir: <path>"
            text = dot_git.read_text(encoding="utf-8").strip()
            if not text.startswith("gitdir: "):
                return None
            git_dir = (top / text.removeprefix("gitdir: ")).resolve()
            common_file = git_dir / "commondir"
            common = (git_dir / common_file.read_text(encoding="utf-8").strip()).resolve() if common_file.is_file() else git_dir
            return top, git_dir, common
    return None


def _head(git_dir: Path, common: Path) -> str | None:
    """The commit ``HEAD`` names, read as text: a detached id, or a symbolic ref through loose refs and packed-refs."""
    value = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    for _ in range(5):  # a symbolic ref may name another; git stops at 5 levels too
        if _OBJECT_ID.match(value):
            return value
        ref = value.removeprefix("ref: ").strip()
        if not value.startswith("ref: ") or not _REF.match(ref) or ".." in ref:
            return None
        loose = next((d / ref for d in (git_dir, common) if (d / ref).is_file()), None)
        if loose is not None:
            value = loose.read_text(encoding="utf-8").strip()
            continue
        packed = common / "packed-refs"
        lines = packed.read_text(encoding="utf-8").splitlines() if packed.is_file() else []
        return next((line.split()[0] for line in lines if line.endswith(f" {ref}") and _OBJECT_ID.match(line.split()[0])), None)
    return None


def _blob_id(data: bytes, id_length: int) -> str:
    """Git's object id of a blob holding ``data`` (SHA-1, or SHA-256 in a repository of 64-digit ids)."""
    digest = hashlib.sha256() if id_length == 64 else hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def _blob_at(objects: Path, commit: str, relative: str) -> str | None:
    """The blob id of ``relative`` in ``commit`` ("" when the commit has no such file), looked up by git in a private
    repository that borrows only ``objects``; None when git cannot answer."""
    git = shutil.which("git")
    if git is None or not objects.is_dir() or "\n" in relative:
        return None
    with tempfile.TemporaryDirectory(prefix="gpufabric-git-") as private:
        for folder in ("objects", "refs"):
            os.mkdir(os.path.join(private, folder), 0o700)
        Path(private, "HEAD").write_text(f"{commit}\n", encoding="utf-8")
        sha256 = "[extensions]\n\tobjectformat = sha256\n" if len(commit) == 64 else ""
        version = 1 if sha256 else 0
        Path(private, "config").write_text(f"[core]\n\trepositoryformatversion = {version}\n\tbare = true\n{sha256}", encoding="utf-8")
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": private,
            "LC_ALL": "C",
            "GIT_DIR": private,
            "GIT_OBJECT_DIRECTORY": str(objects),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_LAZY_FETCH": "1",
            "GIT_ALLOW_PROTOCOL": "none",
        }
        argv = [git, "--no-pager", "-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}", "cat-file", "--batch-check"]
        done = subprocess.run(  # noqa: S603 - fixed argv, no shell, a clean environment and a private GIT_DIR
            argv, cwd=private, env=env, input=f"{commit}:{relative}\n", capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False
        )
    words = done.stdout.split()
    if done.returncode != 0 or not words:
        return None
    if words[-1] == "missing":
        return ""
    return words[0] if len(words) == 3 and words[1] == "blob" and _OBJECT_ID.match(words[0]) else None
