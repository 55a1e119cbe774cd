"""The switch catalog as data: every file loads, the API the planner uses holds, and a broken file is named exactly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fabric.catalog.switch_model import SwitchModel
from fabric.catalog.switches import SWITCH_DATA, SWITCH_MODELS, load_switch_models
from fabric.errors import InputError
from tests.conftest import ROOT, check_golden

FILES = sorted(SWITCH_DATA.glob("*.yaml"))


def test_every_data_file_loads_as_a_model() -> None:
    assert len(FILES) >= 10
    assert sorted(SWITCH_MODELS) == sorted(f.stem for f in FILES)
    for file in FILES:
        assert file.read_text(encoding="utf-8").startswith("# yaml-language-server: $schema=../../../../schema/switch-model.schema.json")


def test_the_planner_api_keeps_its_figures() -> None:
    sn5600, qm9700 = SWITCH_MODELS["sn5600"], SWITCH_MODELS["qm9700"]
    assert (sn5600.ports, sn5600.speed_gbps) == (64, 800)
    assert [sn5600.radix(s) for s in (800, 400, 200, 25)] == [64, 128, 256, None]
    assert sn5600.speeds() == (800, 400, 200, 100)
    assert (qm9700.ports, qm9700.radix(400), qm9700.radix(200)) == (64, 64, 128)
    assert list(SWITCH_MODELS["sn4700"].nos) == ["cumulus", "sonic"]
    assert "sonic" not in SWITCH_MODELS["n9k-c9364d-gx2a"].nos  # no SONiC device directory upstream


@pytest.mark.parametrize(
    ("model", "nos", "index", "speed", "name"),
    [
        ("sn5600", "sonic", 1, 400, "Ethernet4"),  # Mellanox-SN5600-O128 port_config.ini: Ethernet4 etp1b
        ("sn5600", "sonic", 255, 200, "Ethernet510"),  # Mellanox-SN5600-V256: Ethernet510 etp64d
        ("sn4600c", "sonic", 63, 100, "Ethernet252"),  # ACS-MSN4600C: Ethernet252 etp64
        ("sn2201", "sonic", 47, 1, "Ethernet47"),  # ACS-SN2201: Ethernet47 etp48
        ("sn5600", "cumulus", 5, 200, "swp2s1"),
        ("7060x6-64pe", "eos", 3, 200, "Ethernet1/7"),  # 4 x 200G on 8 lanes: /1 /3 /5 /7
        ("7060x5-64s", "eos", 0, 400, "Ethernet1/1"),
        ("n9k-c9332d-gx2b", "nxos", 5, 100, "Ethernet1/2/2"),
        ("qm9700", "mlnx-os", 63, 400, "IB1/32/2"),  # Quantum-2: <asic>/<cage>/<port>
        ("qm8700", "mlnx-os", 1, 100, "IB1/1/2"),
        ("lab-vswitch", "frr", 31, 100, "swp32"),
    ],
)
def test_port_names_per_nos(model: str, nos: str, index: int, speed: int, name: str) -> None:
    assert SWITCH_MODELS[model].port_name(nos, index, speed) == name


@pytest.mark.parametrize(
    ("model", "nos", "index", "speed", "error"),
    [
        ("qm9700", "mlnx-os", 0, 200, "no reference names a 200 Gb/s breakout port under mlnx-os"),
        ("sn5600", "eos", 0, 400, "sn5600 under eos has no port 0 at 400 Gb/s"),
        ("sn4700", "sonic", 128, 100, "sn4700 under sonic has no port 128 at 100 Gb/s"),
    ],
)
def test_a_port_the_model_cannot_name_is_refused(model: str, nos: str, index: int, speed: int, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        SWITCH_MODELS[model].port_name(nos, index, speed)


def test_mtu_limits_per_nos() -> None:
    assert SWITCH_MODELS["7060x5-64s"].max_mtu("eos") == 9214
    assert SWITCH_MODELS["n9k-c9332d-gx2b"].max_mtu("nxos") == 9216
    assert SWITCH_MODELS["sn5600"].max_mtu("sonic") == 9216
    assert SWITCH_MODELS["sn5600"].max_mtu("cumulus") == 9216
    assert SWITCH_MODELS["qm9700"].max_mtu("mlnx-os") is None
    assert SWITCH_MODELS["sn5600"].max_mtu("eos") is None


@pytest.mark.parametrize("model", [m for m in SWITCH_MODELS if SWITCH_MODELS[m].sonic])
def test_sonic_skus_name_each_port_once_on_disjoint_lanes(model: str) -> None:
    m = SWITCH_MODELS[model]
    assert m.sonic is not None
    for sku in m.sonic.skus:
        radix = m.radix(sku.speed_gbps)
        assert radix is not None
        names = [m.port_name("sonic", i, sku.speed_gbps) for i in range(radix)] + [p.name for p in sku.other_ports]
        assert len(set(names)) == len(names), sku.hwsku
        layout = m.sonic_ports(sku.speed_gbps)
        assert [p.name for p in layout] == names, "port_name and the SKU layout agree"
        lanes = [int(lane) for p in layout for lane in p.lanes.split(",")]
        assert len(set(lanes)) == len(lanes), f"{sku.hwsku}: a lane used twice"


def _copy_catalog(tmp_path: Path) -> Path:
    target = tmp_path / "switches"
    shutil.copytree(SWITCH_DATA, target)
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("file", "old", "new", "expected"),
    [
        (
            "sn5600.yaml",
            "cages: 64",
            "cage: 64",
            ["sn5600.yaml:3: error: cages: Field required", "sn5600.yaml:6: error: cage: Extra inputs are not permitted"],
        ),
        (
            "sn4700.yaml",
            "speed_gbps: 400\nbreakout",
            "speed_gbps: fast\nbreakout",
            ["sn4700.yaml:8: error: speed_gbps: Input should be a valid integer"],
        ),
        (
            "sn4700.yaml",
            "swp{cage}s{sub}",
            "swp{cage}s{subport}",
            ["sn4700.yaml:12: error: nos.cumulus.names.split: Value error, 'swp{cage}s{subport}' uses ['subport']"],
        ),
        (
            "sn5600.yaml",
            "hwsku: Mellanox-SN5600-V256\n      speed_gbps: 200",
            "hwsku: Mellanox-SN5600-V256\n      speed_gbps: 100",
            ["sn5600.yaml:36: error: sonic.skus[2]: Value error, breakout_mode '4x200G[100G,50G,25G,10G]' runs 200 Gb/s ports but speed_gbps is 100"],
        ),
        ("qm8700.yaml", "name: qm8700", "name: qm8800", ["qm8700.yaml:1: error: name: 'qm8800' lives in qm8700.yaml; name the file qm8800.yaml"]),
        # issue 30: every string of a data file has a strict type, every number a physical bound
        (
            "sn5600.yaml",
            "description: NVIDIA Spectrum-4 SN5600, 64 x 800GbE OSFP",
            'description: "SN5600\\e]8;;http://x\\e\\\\link\\u202e"',
            ["sn5600.yaml:4: error: description: 'SN5600\\x1b]8;;http://x\\x1b\\\\link\\u202e' is not one line of printable text"],
        ),
        (
            "sn5600.yaml",
            "description: NVIDIA Spectrum-4 SN5600, 64 x 800GbE OSFP",
            "description: " + "x" * 201,
            ["sn5600.yaml:4: error: description: String should have at most 200 characters"],
        ),
        (
            "sn5600.yaml",
            'alias: etp65, index: 65, speed_gbps: 25, breakout_mode: "1x25G[10G]"}',
            'alias: "etp65\\nspeed 400000", index: 65, speed_gbps: 25, breakout_mode: "1x25G[10G]"}',
            ["sn5600.yaml:29: error: sonic.skus[0].other_ports[0].alias: String should match pattern"],
        ),
        (
            "sn5600.yaml",
            "egress_lossless_pool_size: 158229504}   # [sonic-buffers] ACS-SN5600",
            "egress_lossless_pool_size: 1073741825}",
            ["sn5600.yaml:27: error: sonic.skus[0].buffers.egress_lossless_pool_size: Input should be less than or equal to 1073741824"],
        ),
        (
            "sn5600.yaml",
            "lane_stride: 8",
            "lane_stride: 100000",
            ["sn5600.yaml:19: error: sonic.lane_stride: Input should be less than or equal to 64"],
        ),
        ("lab-vswitch.yaml", "cages: 32", "cages: [32", ["lab-vswitch.yaml:7: error: (top level): not valid YAML"]),
    ],
)
def test_a_broken_data_file_is_refused_naming_file_line_and_field(tmp_path: Path, file: str, old: str, new: str, expected: list[str]) -> None:
    directory = _copy_catalog(tmp_path)
    _edit(directory / file, old, new)
    with pytest.raises(InputError) as caught:
        load_switch_models(directory)
    message = str(caught.value)
    for line in expected:
        assert f"{directory}/{line}" in message, message


def test_every_problem_of_every_file_is_reported_at_once(tmp_path: Path) -> None:
    directory = _copy_catalog(tmp_path)
    _edit(directory / "sn5600.yaml", "lanes: 8", "lanes: 0")
    _edit(directory / "qm9700.yaml", "link_layer: infiniband", "link_layer: fibre")
    with pytest.raises(InputError) as caught:
        load_switch_models(directory)
    assert {(f.file, f.dotted_path) for f in caught.value.findings} == {
        (f"{directory}/sn5600.yaml", "lanes"),
        (f"{directory}/qm9700.yaml", "link_layer"),
    }


def switch_schema_json() -> str:
    schema = SwitchModel.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "gpufabric switch model"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def test_committed_schema_matches_the_model(update_golden: bool) -> None:
    check_golden(ROOT / "schema" / "switch-model.schema.json", switch_schema_json(), update_golden)


def test_a_broken_builtin_file_stops_the_run_instead_of_becoming_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fabric.catalog import switches
    from fabric.errors import CatalogError
    from fabric.validate import validate_file

    directory = _copy_catalog(tmp_path)
    _edit(directory / "sn5600.yaml", "cages: 64", "cage: 64")
    monkeypatch.setattr(switches, "SWITCH_DATA", directory)
    switches._builtin.cache_clear()
    try:
        with pytest.raises(CatalogError) as caught:
            validate_file(ROOT / "inventories" / "onprem-roce" / "cluster.yaml")
    finally:
        switches._builtin.cache_clear()
    assert str(caught.value).splitlines() == [
        "gpufabric's built-in catalog is broken; fix these files or reinstall:",
        f"{directory}/sn5600.yaml:3: error: cages: Field required",
        f"{directory}/sn5600.yaml:6: error: cage: Extra inputs are not permitted (got 64)",
    ]


def test_a_model_may_describe_itself_in_any_printable_unicode(tmp_path: Path) -> None:
    directory = _copy_catalog(tmp_path)
    _edit(
        directory / "sn5600.yaml",
        "description: NVIDIA Spectrum-4 SN5600, 64 x 800GbE OSFP",
        "description: NVIDIA Spectrum-4 SN5600 — 64 × 800GbE OSFP",
    )
    assert load_switch_models(directory)["sn5600"].description == "NVIDIA Spectrum-4 SN5600 — 64 × 800GbE OSFP"
