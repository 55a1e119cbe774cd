"""Device adapters by NOS: one transaction contract (``base.Adapter``), one module per NOS."""

from __future__ import annotations

from fabric.apply.nos.base import Adapter
from fabric.apply.nos.cumulus import CumulusAdapter
from fabric.apply.nos.eos import EosAdapter
from fabric.apply.nos.frr import FrrAdapter
from fabric.apply.nos.nxos import NxosAdapter
from fabric.apply.nos.sonic import SonicAdapter

ADAPTERS: dict[str, Adapter] = {a.nos: a for a in (FrrAdapter(), SonicAdapter(), CumulusAdapter(), EosAdapter(), NxosAdapter())}

__all__ = ["ADAPTERS", "Adapter"]
