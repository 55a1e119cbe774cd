"""A NOS → renderer table whose modules are imported when a NOS is first rendered.

A render imports the renderers of the NOSes its plan runs, not all six: a SONiC fabric never imports the Jinja templates
of Cumulus, EOS, NX-OS or MLNX-OS (and so, with SONiC's Python builders, never imports Jinja at all).

A table is typed by the renderer its entries name (``LazyRenderers[Renderer](...)``), so pyright checks its callers;
the ``"module:function"`` strings themselves it cannot read: ``tests/render/test_lazy_imports.py`` imports each entry
and compares its annotations with the table's type.

Example:
    >>> from collections.abc import Callable
    >>> table = LazyRenderers[Callable[[object], str]]({"json": "json:dumps"})
    >>> table["json"]({"a": 1}), sorted(table), "yaml" in table
    ('{"a": 1}', ['json'], False)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

R = TypeVar("R")
"""The renderer type of a table's entries (``Callable[[SwitchFacts], dict[str, str]]`` for the compute switches)."""


class LazyRenderers(Mapping[str, R], Generic[R]):
    """NOS → the function ``"package.module:name"`` names (an ``R``), imported on first lookup and kept."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        """``paths``: NOS → ``"module:function"``, each naming an ``R``."""
        self._paths = dict(paths)
        self._loaded: dict[str, R] = {}

    def __getitem__(self, nos: str) -> R:
        """The renderer of ``nos``, its module imported now if it was not yet.

        Raises:
            KeyError: no renderer for ``nos``.
        """
        found = self._loaded.get(nos)
        if found is None:
            module, _, name = self._paths[nos].partition(":")
            found = self._loaded[nos] = getattr(importlib.import_module(module), name)
        return found

    def __iter__(self) -> Iterator[str]:
        """The NOSes, in the order given."""
        return iter(self._paths)

    def __len__(self) -> int:
        """How many NOSes have a renderer."""
        return len(self._paths)
