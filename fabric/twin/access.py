"""How the push reaches the twin: its switches as ``DeviceAccess`` records, the same records a real fabric gets.

The push path (``fabric.apply``) never imports the twin. The entry points (the CLI, the Ansible module) ask
``access_for``: the twin's switches when the state directory holds a running twin (``lab.json``), else the
definition's real switches (``fabric.apply.rollout.device_access``); and ``adapters_for``: which adapter pushes each
NOS there. On the twin a SONiC switch is its routing config in FRR, so the FRR adapter pushes its rendered ``frr.conf``
(``fabric.twin.rehearse``); on a real fabric each NOS has its own adapter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from fabric.apply.nos import ADAPTERS, Adapter
from fabric.apply.rollout import device_access
from fabric.apply.session import DeviceAccess
from fabric.plan.types import ClusterPlan
from fabric.twin.lab import LabState, load_state
from fabric.validate import Validated


def twin_access(state: LabState) -> dict[str, DeviceAccess]:
    """Access to the twin's switches (compute and L2): loopback ports, the twin's client key and known_hosts."""
    every = state.switches + state.l2_switches
    return {s.name: DeviceAccess(s.name, "127.0.0.1", s.ssh_port, "root", state.client_key, state.known_hosts) for s in every}


def access_for(validated: Validated, plan: ClusterPlan, state: Path, planes: Sequence[str]) -> dict[str, DeviceAccess]:
    """The twin's switches when ``state`` holds a twin, else the real switches of ``planes`` as the definition says.

    Raises:
        InputError: the definition names an environment variable that is not set (real switches only).
    """
    lab = load_state(state)
    if lab is not None:
        return twin_access(lab)
    return device_access(plan, validated.spec.switches, Path(validated.file).parent, validated.file, planes)


def adapters_for(state: Path) -> Mapping[str, Adapter]:
    """NOS → the adapter that pushes it: the twin's under ``state`` (a NOS it rehearses in FRR → the adapter of the
    switch it runs as), else every NOS its own (``fabric.apply.nos.ADAPTERS``).

    Example:
        >>> from pathlib import Path
        >>> adapters_for(Path("/nonexistent"))["sonic"].nos
        'sonic'
    """
    lab = load_state(state)
    if lab is None:
        return ADAPTERS
    return {**ADAPTERS, **{s.rehearses: ADAPTERS[s.nos] for s in lab.switches if s.rehearses}}
