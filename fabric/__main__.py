"""``python -m fabric``: the command line (``fabric.cli``)."""

from __future__ import annotations

from fabric.cli import main, run

__all__ = ["main", "run"]

if __name__ == "__main__":
    run()
