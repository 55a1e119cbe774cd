"""Switch models, kept as data: one file per model in ``fabric/catalog/data/switches/``, loaded at first use.

``SWITCH_MODELS`` maps a model name to its ``SwitchModel`` (``fabric.catalog.switch_model``). The files are read and
validated the first time the mapping is used, once per process; a file with an error stops that first use with a
``CatalogError`` naming file, line, field and problem (``load_switch_models`` on another directory raises ``InputError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

from fabric.catalog._load import BuiltinCatalog, data_files, load_models, read_builtin
from fabric.catalog.switch_model import Nos, NosSupport, PortNames, SonicBuffers, SonicLayout, SonicPort, SonicSku, SwitchModel

__all__ = [
    "ETHERNET_NOS",
    "SWITCH_DATA",
    "SWITCH_MODELS",
    "Nos",
    "NosSupport",
    "PortNames",
    "SonicBuffers",
    "SonicLayout",
    "SonicPort",
    "SonicSku",
    "SwitchModel",
    "load_switch_models",
]

SWITCH_DATA = Path(__file__).parent / "data" / "switches"
ETHERNET_NOS: frozenset[str] = frozenset({"sonic", "cumulus", "eos", "nxos", "frr"})


def load_switch_models(directory: Path = SWITCH_DATA) -> dict[str, SwitchModel]:
    """Every switch model file of ``directory``, validated, by name.

    Raises:
        InputError: a file is not YAML or not a valid model; every problem of every file is listed.

    Example:
        >>> sorted(load_switch_models())[:3]
        ['7010tx-48', '7060x5-64s', '7060x6-64pe']
    """
    return load_models(data_files(directory), SwitchModel, where=str(directory))


@cache
def _builtin() -> dict[str, SwitchModel]:
    return read_builtin(lambda: load_switch_models(SWITCH_DATA))


SWITCH_MODELS: Mapping[str, SwitchModel] = BuiltinCatalog("SWITCH_MODELS", _builtin)
