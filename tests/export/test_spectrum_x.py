"""The NIC Configuration Operator's Spectrum-X settings for a multi-plane fabric: a NicConfigurationTemplate whose
multiplaneMode and numberOfPlanes follow fabric.planes, valid against the operator's published CRD (closed) and the CEL
rules a JSON Schema validator skips (checked here by hand, tests/data/crds/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator
from pydantic import ValidationError

from fabric.cli import main
from fabric.errors import InputError
from fabric.export.k8s.nic_config import nic_configuration
from fabric.model import ClusterSpec
from tests.conftest import DATA, ROOT
from tests.export.test_k8s import _closed  # pyright: ignore[reportPrivateUsage] - the same closing of the CRD schema

TWO_PLANE = ROOT / "inventories" / "two-plane" / "cluster.yaml"
CRD = DATA / "crds" / "configuration.net.nvidia.com_nicconfigurationtemplates.yaml"


def spec(planes: int = 2, **spectrum_x: Any) -> ClusterSpec:
    data = yaml.safe_load(TWO_PLANE.read_text(encoding="utf-8"))
    data["fabric"]["planes"] = planes
    data["fabric"]["spectrum_x"] = {"nic_type": "1023", **spectrum_x}
    if planes == 4:
        data["hardware"]["hgx-h200-8x2x200"]["ports"]["compute"]["ports_per_nic"] = 4
        data["hardware"]["hgx-h200-8x2x200"]["ports"]["compute"]["names"] = [f"enp{b}s0f{f}np{f}" for b in (24, 64, 79, 94) for f in range(4)]
    if planes == 1:
        data["hardware"]["hgx-h200-8x2x200"]["ports"]["compute"].pop("ports_per_nic")
    return ClusterSpec.model_validate(data)


def template(definition: ClusterSpec) -> dict[str, Any]:
    (document,) = list(yaml.safe_load_all(nic_configuration(definition)["k8s/nic-configuration.yaml"]))
    return document


def cel_problems(document: dict[str, Any]) -> list[str]:
    """The CRD's x-kubernetes-validations (network-operator-v26.4.1), written out."""
    body, sx = document["spec"], document["spec"]["template"]["spectrumXOptimized"]
    problems = []
    if sx["enabled"] and body["nicSelector"]["nicType"] not in ("1023", "1025", "a2dc"):
        problems.append("spectrumXOptimized can be enabled only for ConnectX-8, ConnectX-9 or BlueField-3 SuperNICs")
    if sx["multiplaneMode"] == "hwplb" and body["nicSelector"]["nicType"] not in ("1023", "1025"):
        problems.append("hwplb MultiplaneMode can only be enabled for ConnectX-8 (NicType 1023) or ConnectX-9 (NicType 1025)")
    if (sx["multiplaneMode"] == "none") != (sx["numberOfPlanes"] == 1):
        problems.append("multiplaneMode none exactly when numberOfPlanes is 1")
    if sx["version"] in ("RA1.3", "RA2.0") and (sx["multiplaneMode"] != "none" or sx["numberOfPlanes"] != 1):
        problems.append("RA1.3 / RA2.0: multiplaneMode none and 1 plane")
    if sx["enabled"] and (body["template"].get("linkType") != "Ethernet" or body["template"]["numVfs"] != 1):
        problems.append("spectrumXOptimized needs linkType Ethernet and numVfs 1")
    return problems


def crd_problems(document: dict[str, Any]) -> list[str]:
    crd = yaml.safe_load(CRD.read_text(encoding="utf-8"))
    group, version = document["apiVersion"].split("/")
    assert (crd["spec"]["group"], crd["spec"]["names"]["kind"]) == (group, document["kind"])
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == version and v["served"])["schema"]["openAPIV3Schema"]
    found = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in Draft7Validator(_closed(schema)).iter_errors(document)]
    return found + cel_problems(document)


@pytest.mark.parametrize(("planes", "mode"), [(2, "swplb"), (2, "hwplb"), (4, "swplb"), (1, "swplb")])
def test_the_template_follows_the_planes_and_passes_the_crd(planes: int, mode: str) -> None:
    document = template(spec(planes, multiplane_mode=mode))
    assert crd_problems(document) == []
    sx = document["spec"]["template"]["spectrumXOptimized"]
    assert sx["numberOfPlanes"] == planes
    assert sx["multiplaneMode"] == (mode if planes > 1 else "none")
    assert document["spec"]["nicSelector"] == {"nicType": "1023"}


def test_the_hand_written_cel_rules_catch_what_the_api_server_refuses() -> None:
    document = template(spec(2))
    document["spec"]["template"]["spectrumXOptimized"]["numberOfPlanes"] = 1
    document["spec"]["nicSelector"]["nicType"] = "1021"  # ConnectX-7
    assert len(crd_problems(document)) == 2
    document["spec"]["template"]["spectrumXOptimized"]["multiplaneMode"] = "fast"
    assert any("multiplaneMode" in p and "is not one of" in p for p in crd_problems(document))


@pytest.mark.parametrize(
    ("planes", "spectrum_x", "words"),
    [
        (2, {"multiplane_mode": "hwplb", "nic_type": "a2dc"}, "hwplb runs only on ConnectX-8"),
        (2, {"version": "RA2.0"}, "RA2.0 has no multiplane mode"),
        (2, {"nic_type": "1021"}, "Input should be '1023', '1025' or 'a2dc'"),
    ],
)
def test_settings_the_operator_refuses_are_refused_in_the_definition(planes: int, spectrum_x: dict[str, str], words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        spec(planes, **spectrum_x)
    assert words in str(caught.value)


def test_three_planes_are_not_a_spectrum_x_layout() -> None:
    data = yaml.safe_load(TWO_PLANE.read_text(encoding="utf-8"))
    data["fabric"].update(planes=3, spectrum_x={"nic_type": "1023"})
    with pytest.raises(ValidationError) as caught:
        ClusterSpec.model_validate(data)
    assert "1, 2 or 4 planes, not 3" in str(caught.value)


def test_no_spectrum_x_no_file_and_infiniband_is_refused() -> None:
    assert nic_configuration(ClusterSpec.model_validate(yaml.safe_load(TWO_PLANE.read_text(encoding="utf-8")))) == {}
    ib = spec(2).model_copy(deep=True)
    ib = ib.model_copy(update={"planes": ib.planes.model_copy(update={"compute": ib.planes.compute.model_copy(update={"transport": "infiniband"})})})
    with pytest.raises(InputError) as caught:
        nic_configuration(ib)
    assert "fabric.spectrum_x" in str(caught.value.findings[0].dotted_path)


def test_export_k8s_writes_it(tmp_path: Path) -> None:
    definition = tmp_path / "cluster.yaml"
    text = TWO_PLANE.read_text(encoding="utf-8").replace("  plane_spines: separate\n", "  plane_spines: separate\n  spectrum_x: {nic_type: '1023'}\n")
    definition.write_text(text, encoding="utf-8")
    assert main(["export", "k8s", str(definition), "-o", str(tmp_path / "out")]) == 0
    written = (tmp_path / "out" / "k8s" / "nic-configuration.yaml").read_text(encoding="utf-8")
    assert "multiplaneMode: swplb" in written
    assert "numberOfPlanes: 2" in written
