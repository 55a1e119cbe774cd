"""The directory where compiled templates are kept between runs, opened before the first template is loaded.

No Jinja here: the CLI sets the directory up front (``fabric.cli.common.template_cache``) whether or not the render
prints a template; ``fabric.render._jinja`` reads it when it makes an environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabric.classcode import open_private_dir

if TYPE_CHECKING:
    from pathlib import Path

_FOLDER: list[int] = []  # the open cache directory, set once by use_bytecode_cache


def use_bytecode_cache(directory: Path) -> bool:
    """Keep compiled templates in ``directory`` (made, private to the user, if missing); False when it cannot be made
    or is not private to the user (``open_private_dir``): templates are then compiled in memory.

    Call it before the first render of the process: environments made earlier keep compiling in memory.
    """
    folder = open_private_dir(directory)
    if folder is None:
        return False
    _FOLDER[:] = [folder]
    return True


def bytecode_folder() -> int | None:
    """The descriptor of the directory ``use_bytecode_cache`` opened; None when templates compile in memory."""
    return _FOLDER[0] if _FOLDER else None
