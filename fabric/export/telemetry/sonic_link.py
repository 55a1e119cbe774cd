"""SONiC's link flaps and optics over gNMI: the two tables, the gnmic processors that keep only their numbers, and the
series they become (pure; ``telemetry.gnmi`` subscribes, ``telemetry.sonic`` relabels, ``telemetry.link_health`` alerts).

- **Flaps**: APPL_DB ``PORT_TABLE:<port>`` field ``flap_count``, which orchagent raises by one on every oper-status
  change, down or up, beside ``last_down_time`` / ``last_up_time`` (sonic-net/sonic-swss#3052,
  ``orchagent/portsorch.cpp`` ``PortsOrch::updateDbPortFlapCount``; in the 202405 branch @6785d662 and the 202411
  branch @8aa8f0f9). ``show interfaces flap`` reads it (sonic-net/sonic-utilities#3724, 202505 on); the release does
  not matter here, gnmic reads the table. The table's other fields are strings (``admin_status``, ``alias``,
  ``lanes`` "9,10,11,12", ``last_up_time`` "Sat Jan 20 00:04:42 2025", ``tpid`` "0x8100", ...: sonic-utilities
  ``tests/mock_tables/appl_db.json``).
- **Optics**: STATE_DB ``TRANSCEIVER_DOM_SENSOR|<port>``, which xcvrd writes with the unit stripped: ``temperature``
  in °C and ``rx1power`` .. ``rx8power`` in dBm, beside ``voltage``, ``tx<N>bias``, ``tx<N>power`` and others as
  strings (sonic-net/sonic-platform-daemons ``sonic-xcvrd/xcvrd/dom_mgr.py`` ``beautify_dom_info_dict``, branches
  202405 @5d2cfcef and 202411 @60e7224c); a value the module does not report is ``N/A``.

Both are plain tables to SONiC's telemetry server (no virtual path, so the whole table: ``db_client.go``
``populateDbtablePath``, sonic-net/sonic-gnmi @5ec1c20b), answered as one object keyed by port whose values are all
strings. gnmic's prometheus output parses a numeric string itself (``prometheus_common.go`` ``toFloat``,
``strconv.ParseFloat``), but with ``strings-as-labels`` every other string would become a label on all series of
the answer (``buildUniqueLabelsFromValues``). So ``PROCESSORS``: ``event-convert`` (``type: float``) turns the wanted
fields into numbers (gnmic ``docs/user_guide/event_processors/event_convert.md``; a value that does not parse is left
as it was, ``pkg/formatters/event_convert/event_convert.go``), then ``event-delete`` removes every other field of the
two tables by name (``value-names``: Go's RE2 has no look-ahead, so ``other_than`` spells "any field but these" as a
plain regex) and any value still the string ``N/A`` (``values``, which matches string values only,
``pkg/formatters/event_delete/event_delete.go``).
"""

from __future__ import annotations

import re

FLAP_TABLE = "PORT_TABLE"  # APPL_DB
DOM_TABLE = "TRANSCEIVER_DOM_SENSOR"  # STATE_DB
FLAP_FIELDS = ("flap_count",)
DOM_FIELDS = ("temperature", *(f"rx{lane}power" for lane in range(1, 9)))
# Series after prometheus.yml's relabelling (telemetry.sonic.sonic_relabel)
SONIC_FLAPS = "gnmic_sonic_port_flap_count"  # {port}: oper-status changes, counter
SONIC_RX_POWER = "gnmic_sonic_optic_rx_power_dbm"  # {port, lane}
SONIC_TEMPERATURE = "gnmic_sonic_optic_temperature_celsius"  # {port}


Trie = dict[str, "Trie"]


def other_than(names: tuple[str, ...]) -> str:
    """An RE2 regex (no look-ahead) matching any non-empty run of ``[^/]`` that is none of ``names``.

    Example:
        >>> import re
        >>> r = other_than(("flap_count",))
        >>> [bool(re.fullmatch(r, n)) for n in ("flap_count", "flap_coun", "flap_counts", "alias", "f")]
        [False, True, True, True, True]
    """
    trie: Trie = {}
    for name in names:
        node = trie
        for char in name:
            node = node.setdefault(char, {})
        node[""] = {}

    def rest(node: Trie, *, root: bool = False) -> str:
        chars = sorted(c for c in node if c)
        alternatives = [] if "" in node or root else [""]  # a proper prefix of a name is another name
        alternatives.append(f"[^/{re.escape(''.join(chars))}][^/]*" if chars else "[^/]+")
        same: dict[str, list[str]] = {}  # characters followed by the same rest share a class (rx1power .. rx8power)
        for char in chars:
            same.setdefault(rest(node[char]), []).append(char)
        for after, group in same.items():
            alternatives.append((re.escape(group[0]) if len(group) == 1 else f"[{re.escape(''.join(group))}]") + after)
        return "(?:" + "|".join(alternatives) + ")"

    return rest(trie, root=True)


def _field(table: str, names: str) -> str:
    return f"(?:^|/){table}/[^/]+/{names}$"


PROCESSORS: dict[str, dict[str, object]] = {
    "sonic-link-numbers": {
        "event-convert": {
            "value-names": [_field(FLAP_TABLE, "flap_count"), _field(DOM_TABLE, "(temperature|rx[1-8]power)")],
            "type": "float",
        }
    },
    "sonic-link-drop-strings": {
        "event-delete": {
            "value-names": [_field(FLAP_TABLE, other_than(FLAP_FIELDS)), _field(DOM_TABLE, other_than(DOM_FIELDS))],
            "values": ["^N/A$"],
        }
    },
}


def link_relabel(prefix: str) -> list[tuple[str, str, dict[str, str]]]:
    """(regex over gnmic's name, new name, labels) for the two tables' answers (``<prefix>_<TABLE>_<port>_<field>``)."""
    return [
        (f"{prefix}_{FLAP_TABLE}_(.+)_flap_count", SONIC_FLAPS, {"port": "$1"}),
        (f"{prefix}_{DOM_TABLE}_(.+)_rx([1-8])power", SONIC_RX_POWER, {"port": "$1", "lane": "$2"}),
        (f"{prefix}_{DOM_TABLE}_(.+)_temperature", SONIC_TEMPERATURE, {"port": "$1"}),
    ]
