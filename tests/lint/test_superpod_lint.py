"""The DGX SuperPOD H100 RA build (``tests/plan/test_superpod_planes.py``) renders and lints clean: shared in-band leaf
pairs, two OOB switches per SU with the RA's PDUs and the management rack's switches on their spare ports."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from fabric.__main__ import main
from tests.plan.test_superpod_planes import SUPERPOD_H100, ra_pdus


def test_the_ra_build_renders_and_lints_clean(tmp_path: Path) -> None:
    data = yaml.safe_load(SUPERPOD_H100.read_text(encoding="utf-8"))
    data["planes"]["oob"]["network"]["devices"] = ra_pdus(4)
    definition = tmp_path / "cluster.yaml"
    definition.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(definition), "-o", str(out)]) == 0
    assert main(["lint", str(definition), "--configs", str(out)]) == 0
    switches = {p.name for p in (out / "switches").iterdir()}
    assert {f"oob-su{s}-{k}" for s in (1, 2, 3, 4) for k in (1, 2)} | {f"inb-leaf{p}-{x}" for p in (1, 2, 3) for x in "ab"} <= switches
    kea = json.loads((out / "dhcp" / "kea-dhcp4.json").read_text(encoding="utf-8"))
    classes = {c["name"] for c in kea["Dhcp4"]["client-classes"]}
    # spine01 on oob-su1-1's top port (the spill), the first PDU of SU 4 after oob-su4-1's 16 slots and 4 leaves
    assert {"oob-su1-1-swp48", "oob-su4-1-swp21"} <= classes
