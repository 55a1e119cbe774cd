"""The PFC watchdog's timers and action, as each switch config states them, against the contract (``roce.pfc_watchdog``).

``rules.py`` already requires the watchdog on every lossless port; this module checks what it does once on. A value a
config does not state is not checked (the NOS default applies and nothing says otherwise). Forms read, each as the
renderer writes it and with the renderer's source:

- EOS (AVD ``priority-flow-control.j2`` / ``qos-profiles.j2``): ``priority-flow-control pause watchdog default
  timeout|recovery-time|polling-interval <seconds>``, and ``priority-flow-control pause watchdog port action
  drop|notify-only`` in the port profile (notify-only is the contract's ``alert``).
- NX-OS (N9K QoS guide 10.5x, PFC watchdog): ``priority-flow-control watch-dog interval <ms>``, ``... watch-dog
  shutdown-multiplier <n>`` (detection = n x interval), ``priority-flow-control auto-restore multiplier <n>``
  (restoration = n x interval); NX-OS rounds the contract's times up to whole intervals (``render.nxos.nxos_watchdog``)
  and its action is always drop.
- SONiC (``sonic-pfcwd.yang``): ``PFC_WD|GLOBAL`` ``POLL_INTERVAL``; per port ``action``, ``detection_time``,
  ``restoration_time`` (ms).
- Cumulus Linux (NVUE reference: ``nv set qos pfc-watchdog polling-interval``): the polling interval; detection and
  action are the switch's own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, cast

from fabric.model.qos import PfcWatchdogSpec
from fabric.render.nos.nxos.compute import nxos_watchdog

Settings = dict[str, str]
_EOS = {"timeout": "detection_ms", "recovery-time": "restoration_ms", "polling-interval": "polling_ms"}
_EOS_ACTION = {"drop": "drop", "notify-only": "alert"}
_EOS_TIMER = re.compile(r"priority-flow-control pause watchdog default (timeout|recovery-time|polling-interval) ([\d.]+)")


def parse_watchdog(nos: str, text: str) -> Settings:
    """What the config says of the watchdog: ``detection_ms``, ``restoration_ms``, ``polling_ms``, ``action``.

    Example:
        >>> parse_watchdog("eos", "priority-flow-control pause watchdog default timeout 0.2\\n")
        {'detection_ms': '200'}
        >>> parse_watchdog("nxos", "priority-flow-control watch-dog interval 100\\npriority-flow-control watch-dog shutdown-multiplier 3\\n")
        {'polling_ms': '100', 'detection_ms': '300'}
    """
    if nos == "sonic":
        return _sonic(text)
    settings: Settings = {}
    multipliers: dict[str, int] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if nos == "eos" and (m := _EOS_TIMER.fullmatch(line)):
            settings[_EOS[m.group(1)]] = str(round(float(m.group(2)) * 1000))
        elif nos == "eos" and (m := re.fullmatch(r"priority-flow-control pause watchdog port action (\S+)", line)):
            settings["action"] = _EOS_ACTION.get(m.group(1), m.group(1))
        elif nos == "nxos" and (m := re.fullmatch(r"priority-flow-control watch-dog interval (\d+)", line)):
            settings["polling_ms"] = m.group(1)
        elif nos == "nxos" and (m := re.fullmatch(r"priority-flow-control watch-dog shutdown-multiplier (\d+)", line)):
            multipliers["detection_ms"] = int(m.group(1))
        elif nos == "nxos" and (m := re.fullmatch(r"priority-flow-control auto-restore multiplier (\d+)", line)):
            multipliers["restoration_ms"] = int(m.group(1))
        elif nos == "cumulus" and (m := re.fullmatch(r"nv set qos pfc-watchdog polling-interval (\d+)", line)):
            settings["polling_ms"] = m.group(1)
    if "polling_ms" in settings:
        settings.update({key: str(n * int(settings["polling_ms"])) for key, n in multipliers.items()})
    return settings


def _sonic(text: str) -> Settings:
    try:
        tables = cast("dict[str, Any]", json.loads(text)).get("PFC_WD", {})
    except (ValueError, AttributeError):
        return {}  # the QoS parser reports a config_db that is no JSON object
    settings: Settings = {}
    if not isinstance(tables, dict):
        return settings
    entries = cast("dict[str, dict[str, str]]", tables)
    if "POLL_INTERVAL" in entries.get("GLOBAL", {}):
        settings["polling_ms"] = str(entries["GLOBAL"]["POLL_INTERVAL"])
    ports = [fields for name, fields in entries.items() if name != "GLOBAL"]
    for field, key in (("detection_time", "detection_ms"), ("restoration_time", "restoration_ms"), ("action", "action")):
        values = sorted({str(p[field]) for p in ports if field in p})
        if values:
            settings[key] = ",".join(values)  # ports that disagree show every value
    return settings


def expected_watchdog(nos: str, wd: PfcWatchdogSpec) -> Settings:
    """The contract's watchdog in the NOS's own terms (NX-OS: times rounded up to whole polling intervals).

    Example:
        >>> expected_watchdog("nxos", PfcWatchdogSpec(detection_ms=250, restoration_ms=200, polling_ms=100))["detection_ms"]
        '300'
    """
    expected = {"detection_ms": str(wd.detection_ms), "restoration_ms": str(wd.restoration_ms), "polling_ms": str(wd.polling_ms), "action": wd.action}
    if nos == "nxos":
        multipliers = nxos_watchdog(wd)
        expected["detection_ms"] = str(multipliers.shutdown_multiplier * wd.polling_ms)
        expected["restoration_ms"] = str(multipliers.restore_multiplier * wd.polling_ms)
    return expected


def watchdog_findings(nos: str, text: str, wd: PfcWatchdogSpec) -> Iterator[tuple[str, str, str]]:
    """(setting, expected, found) for each watchdog value the config states and the contract disagrees with."""
    if not wd.enabled:
        return
    expected = expected_watchdog(nos, wd)
    for key, found in sorted(parse_watchdog(nos, text).items()):
        if found != expected[key]:
            yield f"pfc watchdog {key.removesuffix('_ms').replace('_', ' ')}", expected[key], found
