"""Rack positions: cabling.csv's rack/U columns come from the definition's ``racks``; a device the plan lacks is an error."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render.cabling import COLUMNS, render_cabling
from tests.conftest import ROOT

RACKS = """
# Where devices sit, rack -> {device: lowest U}: cabling.csv's rack/u columns (empty for devices not placed here).
# Four DGX H100 (8U each) in SU 1's first rack; the management rack holds the spines and the central OOB/storage switches.
racks:
  su1-r1: {gpu001: 2, gpu002: 10, gpu003: 18, gpu004: 26, oob-su1: 42}
  mgmt-r1: {spine01: 41, spine02: 40, spine03: 39, spine04: 38, stor-spine-a: 36, stor-spine-b: 35, oob-mgmt: 42, mgmt01: 2, mgmt02: 4}
"""


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """onprem-roce with SU 1's first rack and the management rack placed."""
    path = tmp_path / "cluster.yaml"
    path.write_text((ROOT / "inventories" / "onprem-roce" / "cluster.yaml").read_text(encoding="utf-8") + RACKS, encoding="utf-8")
    return path


def _rows(example: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(render_cabling(plan_cluster(load_cluster(example))))))


def test_the_columns_keep_their_order_with_the_rack_columns_last(example: Path) -> None:
    assert COLUMNS == ("device", "port", "peer_device", "peer_port", "speed_gbps", "cable_m", "plane", "kind", "rack", "u", "peer_rack", "peer_u")
    header = render_cabling(plan_cluster(load_cluster(example))).splitlines()[0]
    assert header == ",".join(COLUMNS)


def test_each_end_gets_its_rack_and_u_where_the_definition_places_it(example: Path) -> None:
    rows = _rows(example)
    bmc = next(r for r in rows if r["device"] == "oob-su1" and r["peer_device"] == "gpu003")
    assert (bmc["kind"], bmc["rack"], bmc["u"], bmc["peer_rack"], bmc["peer_u"]) == ("bmc", "su1-r1", "42", "su1-r1", "18")
    mgmt = next(r for r in rows if r["device"] == "oob-mgmt" and r["peer_device"] == "spine01")
    assert (mgmt["rack"], mgmt["u"], mgmt["peer_rack"], mgmt["peer_u"]) == ("mgmt-r1", "42", "mgmt-r1", "41")
    host = next(r for r in rows if r["device"] == "leaf-su01-r1" and r["peer_device"] == "gpu001")
    assert (host["rack"], host["u"], host["peer_rack"], host["peer_u"]) == ("", "", "su1-r1", "2")  # the leaf is not placed
    unplaced = next(r for r in rows if r["peer_device"] == "gpu064")
    assert (unplaced["peer_rack"], unplaced["peer_u"]) == ("", "")


def test_a_device_the_plan_lacks_is_an_error_naming_rack_and_device(example: Path) -> None:
    example.write_text(example.read_text(encoding="utf-8").replace("oob-su1: 42}", "oob-su9: 42}"), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        plan_cluster(load_cluster(example))
    assert [(f.path, f.message) for f in caught.value.findings] == [
        (("racks", "su1-r1", "oob-su9"), "'oob-su9' is not a device of this plan; racks place nodes (by hostname) and switches (by name)")
    ]


def test_a_device_in_two_racks_is_refused_when_loaded(example: Path) -> None:
    example.write_text(example.read_text(encoding="utf-8").replace("mgmt01: 2,", "gpu001: 2,"), encoding="utf-8")
    with pytest.raises(InputError, match="'gpu001' is placed in rack 'su1-r1' and in rack 'mgmt-r1'; a device sits in one rack"):
        load_cluster(example)
