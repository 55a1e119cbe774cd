"""NIC models as data: every file loads, the cited figures hold, nothing uncited is filled in, a broken file is named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fabric.catalog.nic_model import NicModel
from fabric.catalog.nics import NIC_DATA, NIC_MODELS, load_nic_models
from fabric.errors import InputError
from tests.conftest import ROOT, check_golden

FILES = sorted(NIC_DATA.glob("*.yaml"))


def test_every_data_file_loads_as_a_model() -> None:
    assert sorted(NIC_MODELS) == sorted(f.stem for f in FILES) == ["bluefield-3", "connectx-7", "connectx-8", "pollara-400", "thor2"]
    for file in FILES:
        assert file.read_text(encoding="utf-8").startswith("# yaml-language-server: $schema=../../../../schema/nic-model.schema.json")


def test_thor2_defaults_are_the_bnxt_re_drivers() -> None:
    # bnxt_re.h "Default DCBx and CC values"; the Juniper JVD: "DSCP 26 on PRIORITY 3", CNP "DSCP 48 and PRIORITY 7".
    thor2 = NIC_MODELS["thor2"]
    marking = thor2.defaults
    assert (marking.roce_dscp, marking.roce_priority, marking.cnp_dscp, marking.cnp_priority) == (26, 3, 48, 7)
    assert (thor2.tool, thor2.driver, thor2.rdma_driver) == ("bnxt", "bnxt_en", "bnxt_re")
    assert {p.name for p in thor2.congestion_control} >= {"cc_mode", "cnp_dscp", "cnp_prio", "roce_dscp", "roce_prio", "ecn_enable"}


def test_connectx_cnp_defaults_and_dcqcn_parameters() -> None:
    for name in ("connectx-7", "connectx-8", "bluefield-3"):
        model = NIC_MODELS[name]
        assert (model.defaults.cnp_dscp, model.defaults.cnp_priority, model.tool) == (48, 6, "mlnx")
        assert model.defaults.roce_dscp is None  # the host sets it (cma_roce_tos): no out-of-the-box value is cited
        params = {p.name: p.default for p in model.congestion_control}
        assert (params["dce_tcp_g"], params["rpg_min_dec_fac"], params["rpg_gd"], params["min_time_between_cnps"]) == (1019, 50, 11, None)


def test_pollara_has_no_uncited_figure() -> None:
    pollara = NIC_MODELS["pollara-400"]
    assert pollara.defaults.model_dump() == {"roce_dscp": None, "roce_priority": None, "cnp_dscp": None, "cnp_priority": None}
    assert (pollara.settable, pollara.tool, pollara.congestion_control) == ((), None, ())


def test_a_settable_field_needs_a_tool(tmp_path: Path) -> None:
    directory = tmp_path / "nics"
    directory.mkdir()
    shutil.copy(NIC_DATA / "thor2.yaml", directory)
    (directory / "bad.yaml").write_text("name: bad\nvendor: amd\ndefaults: {}\nsettable: [cnp_dscp]\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_nic_models(directory)
    assert [str(f) for f in caught.value.findings] == [
        f"{directory}/bad.yaml:1: error: (top level): Value error, settable lists ['cnp_dscp'] but no tool sets them; name the tool or leave settable empty"
    ]


def nic_schema_json() -> str:
    schema = NicModel.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "gpufabric RoCE NIC model"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def test_committed_schema_matches_the_model(update_golden: bool) -> None:
    check_golden(ROOT / "schema" / "nic-model.schema.json", nic_schema_json(), update_golden)
