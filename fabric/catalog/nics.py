"""RoCE NIC models, kept as data: one file per model in ``fabric/catalog/data/nics/`` (schema: ``nic_model``).

``NIC_MODELS`` maps a model name to its validated ``NicModel``: its out-of-the-box RoCE and CNP marking, the
congestion-control parameters it exposes and which marking fields ``roles/nic_qos`` can set on it. The files are read
the first time the mapping is used; a broken file stops that use with a ``CatalogError`` naming file, line and field.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

from fabric.catalog._load import BuiltinCatalog, data_files, load_models, read_builtin
from fabric.catalog.nic_model import CONTRACT_FIELD, MARKING_FIELDS, MarkingField, NicModel, RoceMarking

__all__ = ["CONTRACT_FIELD", "MARKING_FIELDS", "NIC_DATA", "NIC_MODELS", "MarkingField", "NicModel", "RoceMarking", "load_nic_models"]

NIC_DATA = Path(__file__).parent / "data" / "nics"

VENDOR_NAME = {"nvidia": "NVIDIA", "broadcom": "Broadcom", "amd": "AMD"}


def load_nic_models(directory: Path = NIC_DATA) -> dict[str, NicModel]:
    """Every NIC model file of ``directory``, validated, by name.

    Raises:
        InputError: a file is not YAML or not a valid model; every problem of every file is listed.

    Example:
        >>> load_nic_models()["thor2"].defaults.cnp_priority
        7
    """
    return load_models(data_files(directory), NicModel, where=str(directory))


@cache
def _builtin() -> dict[str, NicModel]:
    return read_builtin(lambda: load_nic_models(NIC_DATA))


NIC_MODELS: Mapping[str, NicModel] = BuiltinCatalog("NIC_MODELS", _builtin)
