"""What every fresh-process benchmark does between runs."""

from __future__ import annotations

import time
from pathlib import Path


def set_aside(target: Path) -> None:
    """Move an earlier run's output out of ``target``'s way instead of deleting it (the benchmark's temporary directory
    removes it at the end).

    On an ext4 without a journal (this machine's root file system) a new file skips every inode of its group deleted in
    the last minute (five while the inode table's block is dirty): ``find_inode_bit`` asks ``recently_deleted`` of each
    (torvalds/linux fs/ext4/ialloc.c, ``RECENTCY_MIN`` 60 s, ``RECENTCY_DIRTY`` 300 s; only when ``s_journal`` is NULL).
    Deleting a 400-file output before each run made every file of the next run walk past the last run's deleted inodes:
    a 2,048-node SONiC render's system time went from 0.10 to 0.35-0.42 s over a few minutes of repeats (2026-11-27,
    ``perf``: ``recently_deleted`` / ``find_get_block_common`` under ``__ext4_new_inode``), while ``plan``, which writes
    nothing, stayed put.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "render"
        >>> out.mkdir()
        >>> set_aside(out)
        >>> out.exists(), len(list(out.parent.iterdir()))
        (False, 1)
    """
    if target.exists():
        target.rename(target.with_name(f"{target.name}.set-aside-{time.monotonic_ns()}"))
