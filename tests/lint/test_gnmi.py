"""The telemetry side of the contract: the gNMI server each EOS / NX-OS config runs and the collector's target agree."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pyavd import get_device_config

from fabric.__main__ import main
from fabric.errors import InputError
from fabric.export.telemetry.gnmi import gnmic_config
from fabric.lint.gnmi import GnmiServer, lint_gnmi, lint_gnmic_processors, parse_gnmi_server
from fabric.lint.parse.qos import CONFIG_FILE
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.types import ClusterPlan
from fabric.render import render_avd_configs, render_configs
from tests.conftest import DATA, ROOT


def rendered(case: str, *, gnmi: bool = True) -> tuple[ClusterPlan, dict[str, str | None]]:
    spec = load_cluster(DATA / "render" / case / "cluster.yaml")
    if not gnmi:
        assert spec.fabric is not None
        spec = spec.model_copy(
            update={"fabric": spec.fabric.model_copy(update={"management": spec.fabric.management.model_copy(update={"gnmi": False})})}
        )
    plan = plan_cluster(spec)
    files = render_configs(plan)
    assert plan.fabric is not None
    return plan, {s.name: files.get(f"switches/{s.name}/{CONFIG_FILE[s.nos]}") for s in plan.fabric.switches}


@pytest.mark.parametrize(
    ("case", "nos", "port", "vrf"),
    [("eos-3tier", "eos", 6030, "mgmt"), ("nxos-3tier", "nxos", 50051, "management"), ("cumulus-3tier", "cumulus", 9339, "")],
)
def test_rendered_switches_serve_gnmi_where_the_collector_dials(case: str, nos: str, port: int, vrf: str) -> None:
    plan, configs = rendered(case)
    assert plan.fabric is not None
    address = {s.name: s.mgmt_address.split("/")[0] for s in plan.fabric.switches}
    servers = {name: parse_gnmi_server(nos, text or "") for name, text in configs.items()}
    assert servers == {name: GnmiServer(port, vrf or address[name]) for name in configs}  # Cumulus: on its management address
    assert lint_gnmi(plan, configs, gnmic_config(plan)) == []
    targets = yaml.safe_load(gnmic_config(plan))["targets"]
    assert {t["name"] for t in targets.values()} == set(configs)
    assert all(address.endswith(f":{port}") for address in targets)


def test_a_collector_port_that_differs_from_the_config_is_a_finding() -> None:
    plan, configs = rendered("eos")
    [finding] = lint_gnmi(plan, configs, gnmic_config(plan).replace(":6030", ":6031", 1))
    assert finding.expected == "6030"
    assert finding.actual == "6031"
    assert finding.device == "telemetry/gnmic.yaml"


def test_a_config_without_the_server_or_in_the_wrong_vrf_is_a_finding() -> None:
    plan, configs = rendered("eos")
    first, second, *_ = sorted(configs)
    text = configs[first] or ""
    configs[first] = text.replace(
        "management api gnmi\n   transport grpc GNMI\n      port 6030\n      vrf mgmt\n      ip access-group MGMT-GNMI\n", ""
    )
    configs[second] = (configs[second] or "").replace("      vrf mgmt\n      ip access-group MGMT-GNMI\n", "      ip access-group MGMT-GNMI\n")
    findings = {f.device: f for f in lint_gnmi(plan, configs, gnmic_config(plan))}
    assert findings[first].actual == "none"
    assert (findings[second].where, findings[second].expected, findings[second].actual) == ("gnmi listens on", "mgmt", "default")


def test_a_hand_set_nxos_port_is_read_and_compared() -> None:
    plan, configs = rendered("nxos")
    name = sorted(configs)[0]
    configs[name] = (configs[name] or "").replace("grpc port 50051", "grpc port 50052")
    [finding] = lint_gnmi(plan, configs, gnmic_config(plan))
    assert (finding.where, finding.expected, finding.actual) == (f"target {name}", "50052", "50051")


def test_cumulus_before_5_13_renders_no_server_and_is_not_linted_for_one() -> None:
    plan, configs = rendered("cumulus-5.9")
    assert all("gnmi-server" not in (t or "") for t in configs.values())
    assert lint_gnmi(plan, configs, gnmic_config(plan)) == []


def test_a_cumulus_server_on_another_address_is_a_finding() -> None:
    plan, configs = rendered("cumulus")
    name = sorted(configs)[0]
    text = configs[name] or ""
    address = next(line for line in text.splitlines() if "gnmi-server listening-address" in line).split()[-1]
    configs[name] = text.replace(f"gnmi-server listening-address {address}", "gnmi-server listening-address 127.0.0.1")
    [finding] = lint_gnmi(plan, configs, gnmic_config(plan))
    assert (finding.device, finding.where, finding.expected, finding.actual) == (name, "gnmi listens on", address, "127.0.0.1")


def test_gnmi_off_renders_no_server_and_leaves_the_switches_out_of_the_collector() -> None:
    plan, configs = rendered("eos", gnmi=False)
    assert all("management api gnmi" not in (t or "") for t in configs.values())
    assert "management_api_gnmi" not in render_avd_configs(plan)[f"structured_configs/{sorted(configs)[0]}.yml"]
    assert gnmic_config(plan) == ""
    assert lint_gnmi(plan, configs, "") == []


def test_pyavd_renders_the_same_gnmi_block_from_our_structured_config() -> None:
    plan, configs = rendered("eos")
    name = sorted(configs)[0]
    avd = get_device_config(yaml.safe_load(render_avd_configs(plan)[f"structured_configs/{name}.yml"]))
    block = "management api gnmi\n   transport grpc GNMI\n      port 6030\n      vrf mgmt\n      ip access-group MGMT-GNMI\n"
    acl = "ip access-list standard MGMT-GNMI\n   10 permit 10.103.0.0/16\n"  # only the OOB plane, as SSH
    assert block in avd
    assert acl in avd
    assert block in (configs[name] or "")
    assert acl in (configs[name] or "")


def test_a_collector_file_without_targets_is_an_input_error() -> None:
    plan, configs = rendered("eos")
    with pytest.raises(InputError, match="no 'targets' mapping"):
        lint_gnmi(plan, configs, "outputs: {}\n", "out/telemetry/gnmic.yaml")


def test_lint_reads_the_exported_collector_beside_the_configs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition = str(DATA / "render" / "eos" / "cluster.yaml")
    assert main(["render", definition, "-o", str(tmp_path)]) == 0
    assert main(["export", "telemetry", definition, "-o", str(tmp_path)]) == 0
    assert main(["lint", definition, "--configs", str(tmp_path)]) == 0
    gnmic = tmp_path / "telemetry" / "gnmic.yaml"
    gnmic.write_text(gnmic.read_text(encoding="utf-8").replace(":6030", ":6031"), encoding="utf-8")
    capsys.readouterr()
    assert main(["lint", definition, "--configs", str(tmp_path)]) == 1
    assert "the collector must dial the port the switch serves gNMI on (expected 6030, found 6031)" in capsys.readouterr().err


SONIC_DEFINITION = ROOT / "inventories" / "onprem-roce" / "cluster.yaml"


def _sonic_gnmic() -> dict[str, object]:
    return yaml.safe_load(gnmic_config(plan_cluster(load_cluster(SONIC_DEFINITION))))


def test_the_exported_sonic_collector_keeps_its_strings_out_of_the_labels() -> None:
    assert lint_gnmic_processors(yaml.safe_dump(_sonic_gnmic(), sort_keys=False)) == []


def test_a_collector_without_a_sonic_processor_or_with_one_edited_is_a_finding() -> None:
    document = _sonic_gnmic()
    outputs = document["outputs"]
    assert isinstance(outputs, dict)
    outputs["prometheus"]["event-processors"].remove("sonic-link-drop-strings")
    processors = document["processors"]
    assert isinstance(processors, dict)
    processors["sonic-link-numbers"]["event-convert"]["value-names"] = ["flap_count$"]
    found = {(f.where, f.actual) for f in lint_gnmic_processors(yaml.safe_dump(document), "out/telemetry/gnmic.yaml")}
    assert found == {("outputs.prometheus.event-processors", "absent"), ("processors.sonic-link-numbers", "changed")}


def test_without_strings_as_labels_or_sonic_targets_nothing_is_required() -> None:
    document = _sonic_gnmic()
    outputs = document["outputs"]
    assert isinstance(outputs, dict)
    outputs["prometheus"]["strings-as-labels"] = False
    outputs["prometheus"]["event-processors"] = []
    assert lint_gnmic_processors(yaml.safe_dump(document)) == []
    cumulus = gnmic_config(plan_cluster(load_cluster(DATA / "plan" / "three-tier" / "cluster.yaml")))
    assert lint_gnmic_processors(cumulus) == []


def test_lint_finds_a_hand_edited_sonic_collector(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition = str(SONIC_DEFINITION)
    assert main(["render", definition, "-o", str(tmp_path)]) == 0
    assert main(["export", "telemetry", definition, "-o", str(tmp_path)]) == 0
    assert main(["lint", definition, "--configs", str(tmp_path)]) == 0
    gnmic = tmp_path / "telemetry" / "gnmic.yaml"
    gnmic.write_text(gnmic.read_text(encoding="utf-8").replace("    - sonic-link-drop-strings\n", ""), encoding="utf-8")
    capsys.readouterr()
    assert main(["lint", definition, "--configs", str(tmp_path)]) == 1
    assert "outputs.prometheus.event-processors: SONiC strings would become labels" in capsys.readouterr().err
