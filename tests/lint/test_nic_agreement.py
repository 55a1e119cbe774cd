"""Cross-artifact (issue 34): for every host port of the mixed-NIC and all-Thor2 examples, what the node's NIC will send
(the Ansible inventory's variables as roles/nic_qos applies them, over the NIC's catalog defaults for what it leaves)
is what the rendered switch config classifies: RoCE DSCP into the lossless class on the NIC's RoCE priority, CNP DSCP
into the strict CNP class on the NIC's CNP priority. Read from the files alone, independently of the linter."""

from __future__ import annotations

from typing import Any

import pytest

from fabric.catalog.nics import NIC_MODELS
from fabric.inventory import onprem_host_vars
from fabric.lint.parse.qos import CONFIG_FILE, PARSERS
from fabric.plan.compute.facts import build_switch_facts
from tests.render.conftest import files_of, plan_of

# roles/nic_qos: the contract variable each configfs / sysfs write takes (nic-qos.env.j2: DSCP, PRIORITY, CNP_DSCP, CNP_PRIORITY)
ROLE_SETS = {"roce_dscp": "dscp", "roce_priority": "priority", "cnp_dscp": "cnp_dscp", "cnp_priority": "cnp_priority"}


def sends(host: dict[str, Any]) -> dict[str, int]:
    """What a host's compute NIC puts on the wire once nic_qos ran: the role's value where its tool sets the field."""
    nic = host["gpufabric_roce_nic"]
    model = NIC_MODELS[nic["model"]]
    assert nic["tool"] == model.tool
    return {f: host["gpufabric_roce"][var] if f in model.settable else getattr(model.defaults, f) for f, var in ROLE_SETS.items()}


@pytest.mark.parametrize("case", ["render/mixed-nic", "render/thor2-eos", "render/thor2-cumulus"])
def test_switch_and_nic_settings_agree_port_by_port(case: str) -> None:
    plan, files = plan_of(case), files_of(case)
    hosts = onprem_host_vars(plan)
    models: set[str] = set()
    checked = 0
    for fact in build_switch_facts(plan):
        qos = PARSERS[fact.switch.nos](fact.switch.name, files[f"switches/{fact.switch.name}/{CONFIG_FILE[fact.switch.nos]}"])
        for port in (p for p in fact.ports if p.kind == "host"):
            nic = sends(hosts[port.peer])
            models.add(hosts[port.peer]["gpufabric_roce_nic"]["model"])
            where = f"{fact.switch.name} {port.name} ({port.description})"
            assert qos.dscp_to_tc[nic["roce_dscp"]] == plan.roce.traffic_class, where
            assert qos.dscp_to_priority[nic["roce_dscp"]] == nic["roce_priority"], where
            assert qos.pfc_priorities == {nic["roce_priority"]}, where
            assert qos.dscp_to_tc[nic["cnp_dscp"]] == plan.roce.cnp.traffic_class, where
            assert plan.roce.cnp.traffic_class in qos.strict_tcs, where
            assert qos.dscp_to_priority[nic["cnp_dscp"]] == nic["cnp_priority"], where
            checked += 1
    assert checked >= 8
    assert models == ({"connectx-7", "thor2"} if case == "render/mixed-nic" else {"thor2"})


def test_the_mixed_example_sets_the_thor2s_cnp_priority_the_connectx7_does_not_need() -> None:
    hosts = onprem_host_vars(plan_of("render/mixed-nic"))
    assert hosts["amd01"]["gpufabric_roce_nic"] == {"model": "thor2", "vendor": "broadcom", "tool": "bnxt", "sets": ["cnp_priority"]}
    assert hosts["nv01"]["gpufabric_roce_nic"]["tool"] == "mlnx"
    assert sends(hosts["amd01"]) == sends(hosts["nv01"]) == {"roce_dscp": 26, "roce_priority": 3, "cnp_dscp": 48, "cnp_priority": 6}
