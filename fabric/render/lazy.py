"""A NOS → renderer table whose modules are imported when a NOS is first rendered.

A render imports the renderers of the NOSes its plan runs, not all six: a SONiC fabric never imports the Jinja templates
of Cumulus, EOS, NX-OS or MLNX-OS (and so, with SONiC's Python builders, never imports Jinja at all).

Example:
    >>> table = LazyRenderers({"json": "json:dumps"})
    >>> table["json"]({"a": 1}), sorted(table), "yaml" in table
    ('{"a": 1}', ['json'], False)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any


class LazyRenderers(Mapping[str, Any]):
    """NOS → the function ``"package.module:name"`` names, imported on first lookup and kept."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        """``paths``: NOS → ``"module:function"``."""
        self._paths = dict(paths)
        self._loaded: dict[str, Any] = {}

    def __getitem__(self, nos: str) -> Any:  # noqa: ANN401 - each table's caller knows its renderer type
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
