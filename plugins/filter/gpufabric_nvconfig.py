"""Ansible filters of the nic_firmware role: ConnectX non-volatile configuration (nvconfig) read from
``mlxconfig -d <dev> -e query`` and the settings NVIDIA's NIC Configuration Operator would write.

The operator (Mellanox/nic-configuration-operator @8bfbeb3) queries every parameter with ``mlxconfig -d <dev> -e query``
(``pkg/nvconfig/utils.go`` ``queryMLXConfig``: the Default, Current and Next Boot columns, a leading ``*`` stripped),
so a parameter the firmware hides is simply absent, never an error; and it builds the wanted values per device
(``pkg/configuration/configvalidation.go`` ``ConstructNvParamMapFromTemplate``): port parameters for every port the
device lists (``for portIdx := 1; portIdx <= portCount``, each gated on its presence in the query), and
``MAX_ACC_OUT_READ`` only where the device's default is 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

# a parameter row: optional '*' (next boot differs), the name, then one (plain q) or three (-e: Default, Current,
# Next Boot) values separated by two or more spaces (the operator splits on \s{2,})
_ROW = re.compile(r"^\*?\s+([A-Z0-9_]+(?:\[\d+\])?)\s{2,}(\S.*?)\s*$")
_PORT = re.compile(r"^(.+)_P(\d+)$")


def _value(raw: str) -> int | str:
    """``False(0)``, ``ETH(2)``, ``DEVICE_DEFAULT(0)`` → the number in parentheses; ``255`` → 255; else the text."""
    number = re.search(r"\((\d+)\)$", raw)
    if number:
        return int(number.group(1))
    return int(raw) if raw.isdigit() else raw


def nvconfig_query(output: str) -> dict[str, dict[str, int | str]]:
    r"""Every parameter of ``mlxconfig -d <dev> -e query`` → {default, current, next}; plain ``q`` output (the Next Boot
    column only) gives ``next`` alone. Array parameters (``Array[0..7]``) keep their text.

    Example:
        >>> out = "Configurations:            Default     Current     Next Boot\n"
        >>> out += "*        LINK_TYPE_P1        IB(1)       IB(1)       ETH(2)\n"
        >>> nvconfig_query(out)
        {'LINK_TYPE_P1': {'default': 1, 'current': 1, 'next': 2}}
        >>> nvconfig_query("Configurations:          Next Boot\n         ATS_ENABLED        False(0)\n")
        {'ATS_ENABLED': {'next': 0}}
    """
    found: dict[str, dict[str, int | str]] = {}
    inside = False
    for line in output.splitlines():
        if line.startswith("Configurations:"):
            inside = True
            continue
        row = _ROW.match(line) if inside else None
        if not row:
            continue
        name, rest = row.groups()
        values = [_value(v) for v in re.split(r"\s{2,}", rest)]
        if len(values) == 3:
            found[name] = {"default": values[0], "current": values[1], "next": values[2]}
        elif len(values) == 1:
            found[name] = {"next": values[0]}
    return found


def nvconfig_wanted(output: str, plan: Mapping[str, Any]) -> dict[str, Any]:
    r"""What to write on one NIC, from its ``-e query`` and the role's plan: ``{"set": {NAME: value}, "skipped": [why]}``.

    ``plan``: ``settings`` (device-wide NAME: value), ``port_settings`` (BASE: value, written as ``BASE_P<n>`` for every
    port the NIC lists, as the operator does: P1 and P2 of a dual-port card), ``optional`` (names or bases skipped when
    the NIC does not list them: hidden by the firmware, or not changeable, as LINK_TYPE on an Ethernet-only card) and
    ``default_only`` (names written only where the NIC's default is the wanted value: MAX_ACC_OUT_READ=0, whose zero
    "is not available" on some firmware, so the operator writes it only ``if maxAccOutReadParamDefaultValue ==
    consts.NvParamZero``, else skips it with a warning). A wanted name the NIC does not list and that is not optional
    stays in ``set`` (the verify names it as missing). LINK_TYPE_* come first in ``set``: RoCE parameters apply to
    Ethernet ports (the operator refuses roceOptimized with link type Infiniband).

    Example:
        >>> out = "Configurations:            Default     Current     Next Boot\n"
        >>> for row in ("LINK_TYPE_P1  IB(1)  IB(1)  IB(1)", "LINK_TYPE_P2  IB(1)  IB(1)  IB(1)", "MAX_ACC_OUT_READ  44  44  44",
        ...             "ROCE_CC_PRIO_MASK_P1  0  0  0", "ROCE_CC_PRIO_MASK_P2  0  0  0"):
        ...     out += "         " + row.replace("  ", "     ") + "\n"
        >>> plan = {"settings": {"MAX_ACC_OUT_READ": 0}, "port_settings": {"LINK_TYPE": 2, "ROCE_CC_PRIO_MASK": 255},
        ...         "optional": ["LINK_TYPE", "MAX_ACC_OUT_READ"], "default_only": ["MAX_ACC_OUT_READ"]}
        >>> nvconfig_wanted(out, plan)["set"]
        {'LINK_TYPE_P1': 2, 'LINK_TYPE_P2': 2, 'ROCE_CC_PRIO_MASK_P1': 255, 'ROCE_CC_PRIO_MASK_P2': 255}
        >>> nvconfig_wanted(out, plan)["skipped"]
        ['MAX_ACC_OUT_READ: default 44, not 0 (firmware without the auto mode: skipped, as the operator does)']
    """
    have = nvconfig_query(output)
    optional = set(plan.get("optional", []))
    default_only = set(plan.get("default_only", []))
    wanted: dict[str, int] = {}
    skipped: list[str] = []
    for base, value in sorted(dict(plan.get("port_settings", {})).items()):
        ports = sorted((int(m.group(2)), name) for name in have if (m := _PORT.match(name)) and m.group(1) == base)
        if not ports and base in optional:
            skipped.append(f"{base}_P<n>: not listed by this NIC")
            continue
        for _, name in ports or [(1, f"{base}_P1")]:
            wanted[name] = int(value)
    for name, value in sorted(dict(plan.get("settings", {})).items()):
        if name not in have and name in optional:
            skipped.append(f"{name}: not listed by this NIC (hidden or unsupported)")
            continue
        default = have.get(name, {}).get("default")
        if name in default_only and default is not None and default != int(value):
            skipped.append(f"{name}: default {default}, not {int(value)} (firmware without the auto mode: skipped, as the operator does)")
            continue
        wanted[name] = int(value)
    ordered = dict(sorted(wanted.items(), key=lambda kv: (not kv[0].startswith("LINK_TYPE_"), kv[0])))
    return {"set": ordered, "skipped": skipped}


def nvconfig_diff(output: str, plan: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    r"""Wanted settings whose next-boot value differs (missing ones included): name → {have, want}.

    Example:
        >>> nvconfig_diff("Configurations:   Next Boot\n   ATS_ENABLED   True(1)\n", {"settings": {"ATS_ENABLED": 0, "CNP_DSCP_P1": "48"}})
        {'ATS_ENABLED': {'have': 1, 'want': 0}, 'CNP_DSCP_P1': {'have': None, 'want': 48}}
    """
    have = nvconfig_query(output)
    return {
        name: {"have": have.get(name, {}).get("next"), "want": value}
        for name, value in nvconfig_wanted(output, plan)["set"].items()
        if have.get(name, {}).get("next") != value
    }


def nvconfig_set_args(output: str, plan: Mapping[str, Any]) -> list[str]:
    r"""``NAME=value`` for each setting that differs (the arguments of ``mlxconfig -y -d <dev> set``), LINK_TYPE first.

    Example:
        >>> nvconfig_set_args("Configurations:   Next Boot\n   ATS_ENABLED   True(1)\n   LINK_TYPE_P1   IB(1)\n",
        ...                   {"settings": {"ATS_ENABLED": 0}, "port_settings": {"LINK_TYPE": 2}})
        ['LINK_TYPE_P1=2', 'ATS_ENABLED=0']
    """
    return [f"{name}={change['want']}" for name, change in nvconfig_diff(output, plan).items()]


def nvconfig_cards(results: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per ConnectX card from the registered ``readlink -f /sys/class/infiniband/<dev>/device`` results: the
    functions of one card (``0000:18:00.0`` and ``.1``, each its own RDMA device) share one nvconfig, so the card is
    queried and written once, through its lowest function (the operator queries a device through its first port).

    Example:
        >>> nvconfig_cards([{"item": "mlx5_1", "stdout": "/sys/devices/pci0000:00/0000:18:00.1"},
        ...                 {"item": "mlx5_0", "stdout": "/sys/devices/pci0000:00/0000:18:00.0"}])
        [{'card': '0000:18:00', 'bdf': '0000:18:00.0', 'devices': ['mlx5_0', 'mlx5_1']}]
    """
    cards: dict[str, dict[str, Any]] = {}
    for result in results:
        bdf = str(result.get("stdout", "")).rstrip("/").rsplit("/", 1)[-1]
        if not re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", bdf):
            continue
        card = cards.setdefault(bdf[:-2], {"card": bdf[:-2], "bdf": bdf, "devices": []})
        card["bdf"] = min(card["bdf"], bdf)
        card["devices"].append(str(result.get("item", "?")))
    return [{**card, "devices": sorted(card["devices"])} for _, card in sorted(cards.items())]


def nvconfig_problems(results: list[dict[str, Any]], plan: Mapping[str, Any]) -> list[str]:
    r"""One line per setting a card (the registered loop results of the read-back, looped over ``nvconfig_cards``) does
    not have for the next boot.

    Example:
        >>> result = {"item": {"devices": ["mlx5_0"]}, "rc": 0, "stdout": "Configurations:  Next Boot\n  ATS_ENABLED  True(1)\n"}
        >>> nvconfig_problems([result], {"settings": {"ATS_ENABLED": 0}})
        ['mlx5_0: ATS_ENABLED expected 0, next boot 1']
    """
    lines: list[str] = []
    for result in results:
        device = "/".join(result.get("item", {}).get("devices", ["?"]))
        if result.get("rc", 0) != 0:
            said = str(result.get("stderr") or result.get("stdout") or result.get("msg") or "").strip().splitlines()
            lines.append(f"{device}: the query failed ({said[-1] if said else 'no output'})")
            continue
        lines += [
            f"{device}: {name} expected {change['want']}, next boot {'<missing>' if change['have'] is None else change['have']}"
            for name, change in nvconfig_diff(str(result.get("stdout", "")), plan).items()
        ]
    return lines


def nvconfig_skipped(results: list[dict[str, Any]], plan: Mapping[str, Any]) -> list[str]:
    """What was skipped on each card and why (the operator's warnings), one line each.

    Example:
        >>> nvconfig_skipped([{"item": {"devices": ["mlx5_0"]}, "rc": 0, "stdout": ""}], {"settings": {"X": 0}, "optional": ["X"]})
        ['mlx5_0: X: not listed by this NIC (hidden or unsupported)']
    """
    return [
        f"{'/'.join(result.get('item', {}).get('devices', ['?']))}: {why}"
        for result in results
        if result.get("rc", 0) == 0
        for why in nvconfig_wanted(str(result.get("stdout", "")), plan)["skipped"]
    ]


class FilterModule:
    """Registers the filters with Ansible."""

    def filters(self) -> dict[str, Any]:
        return {
            "gpufabric_nvconfig_cards": nvconfig_cards,
            "gpufabric_nvconfig_set_args": nvconfig_set_args,
            "gpufabric_nvconfig_problems": nvconfig_problems,
            "gpufabric_nvconfig_skipped": nvconfig_skipped,
        }
