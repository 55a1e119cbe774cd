"""``python -m fabric``: the command line (``fabric.cli``)."""

from __future__ import annotations

import sys

from fabric.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
