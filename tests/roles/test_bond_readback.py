"""network_planes' bond read-back without a node: ``/proc/net/bonding/<bond>`` in the bonding driver's format
(``drivers/net/bonding/bond_procfs.c``) against the planned bond, through the filter the verify task uses."""

from __future__ import annotations

import pytest

from plugins.filter.gpufabric_bonding import bond_miimon_ms, bond_problems, bonding_report

BOND = {"name": "bond-storage", "members": ["enp170s0f0np0", "enp41s0f0np0"]}


def proc(
    miimon: str = "100", mode: str = "IEEE 802.3ad Dynamic link aggregation", members: tuple[str, ...] = ("enp41s0f0np0", "enp170s0f0np0")
) -> str:
    """/proc/net/bonding/bond-storage as bond_procfs.c prints it (header, mode, MII, 802.3ad info, one block per slave)."""
    slaves = "".join(f"\nSlave Interface: {m}\nMII Status: up\nSpeed: 200000 Mbps\nDuplex: full\nLink Failure Count: 0\n" for m in members)
    return (
        "Ethernet Channel Bonding Driver: v6.8.0-45-generic\n\n"
        f"Bonding Mode: {mode}\nTransmit Hash Policy: layer3+4 (1)\nMII Status: up\n"
        f"MII Polling Interval (ms): {miimon}\nUp Delay (ms): 0\nDown Delay (ms): 0\nPeer Notification Delay (ms): 0\n\n"
        "802.3ad info\nLACP active: on\nLACP rate: fast\nMin links: 0\nAggregator selection policy (ad_select): stable\n" + slaves
    )


def test_the_planned_bond_reads_back_clean() -> None:
    assert bond_miimon_ms(proc()) == 100
    assert bond_problems(proc(), BOND, 100) == []


@pytest.mark.parametrize(
    ("miimon", "expected"),
    [
        ("200", "bond-storage: MII polling interval expected 100 ms, actual 200 ms"),
        ("1000", "bond-storage: MII polling interval expected 100 ms, actual 1000 ms"),  # a prefix match would pass
        ("10", "bond-storage: MII polling interval expected 100 ms, actual 10 ms"),
        ("0", "bond-storage: MII polling interval expected 100 ms, actual 0 ms"),  # no link monitoring at all
    ],
)
def test_a_bond_polling_at_another_interval_is_named_with_both_values(miimon: str, expected: str) -> None:
    assert bond_problems(proc(miimon), BOND, 100) == [expected]


def test_the_interval_is_read_by_its_label_as_digits_never_by_stripping_a_unit() -> None:
    # "Up Delay (ms): 100" must not stand in for the missing MII line, nor "100ms" be read as 100
    without = proc().replace("MII Polling Interval (ms): 100\n", "").replace("Up Delay (ms): 0", "Up Delay (ms): 100")
    assert bond_miimon_ms(without) is None
    assert bond_problems(without, BOND, 100) == [
        "bond-storage: MII polling interval expected 100 ms, actual unknown (no 'MII Polling Interval (ms)' line)"
    ]
    assert bond_miimon_ms(proc("100ms")) is None


def test_another_mode_or_another_member_set_is_named() -> None:
    assert bond_problems(proc(mode="load balancing (round-robin)", members=("enp41s0f0np0",)), BOND, 100) == [
        "bond-storage: mode expected 'IEEE 802.3ad Dynamic link aggregation', actual 'load balancing (round-robin)'",
        "bond-storage: members expected enp170s0f0np0, enp41s0f0np0, actual enp41s0f0np0",
    ]


def test_the_report_over_a_registered_loop_names_a_missing_bond_and_skips_nothing_else() -> None:
    results = [
        {"item": BOND, "rc": 0, "stdout": proc("250")},
        {"item": {**BOND, "name": "bond-inband"}, "rc": 1, "stdout": "", "stderr": "cat: /proc/net/bonding/bond-inband: No such file or directory"},
    ]
    assert bonding_report(results, 250) == ["bond-inband: not a bond in the kernel (cat: /proc/net/bonding/bond-inband: No such file or directory)"]
    assert bonding_report(results[:1], 100) == ["bond-storage: MII polling interval expected 100 ms, actual 250 ms"]
