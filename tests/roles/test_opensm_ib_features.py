"""The opensm role's SHARP and adaptive-routing logic from its own files, without a node: opensm.conf carries
sharp_enabled 2 exactly when the definition asks, the OpenSM version gate, the ibdiagnet read-back assert, and the
profile's CPU architecture checked by gpu_driver and rdma_stack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.roles.role_logic import facts, render, role_vars, task
from tests.roles.scenario import host_vars, site
from tests.roles.stubs import role_templates

DATA = Path(__file__).parent / "data" / "ibdiagnet"
SHARP_SITE = site("onprem-ib-sharp")


def _conf(**extra: Any) -> str:
    sm01 = host_vars(SHARP_SITE, "sm01")
    env = role_templates(ROOT / "roles" / "opensm")
    env.trim_blocks = True
    variables = {
        "ansible_managed": "managed",
        "gpufabric_cluster": "c",
        "opensm_priority": sm01["gpufabric_sm_priority"],
        "_opensm_unit": "opensmd.service",
        "_opensm_guid": "0x0c42a10300e17f5a",
        "_opensm_os": {"config_dir": "/etc/opensm", "unit_per_port": False, "defaults_file": "/etc/default/opensm", "ports_variable": "PORTS"},
        "opensm_routing_engine": sm01["gpufabric_infiniband"]["routing_engine"],
        "opensm_sweep_interval_s": 10,
        "opensm_lmc": 0,
        "opensm_mtu": 4096,
        "opensm_sharp": sm01["gpufabric_infiniband"]["sharp"],
    }
    variables.update(extra)
    return env.get_template("opensm.conf.j2").render(**variables)


def test_opensm_conf_enables_sharp_and_the_ar_engine_from_the_definition() -> None:
    text = _conf()
    assert "routing_engine ar_updn\n" in text
    assert "\nsharp_enabled 2\n" in text
    assert "sharp_enabled" not in _conf(opensm_sharp=False)  # negative control: the line follows the definition


def _version_gate(stdout: str, **options: Any) -> bool:
    found = role_vars("opensm")
    found.update({"opensm_ib": {}, "__opensm_version": {"stdout": stdout, "rc": 0}, "_opensm_unit": "opensmd.service", **options})
    step = task("opensm", "opensm.yml", "Configure | NVIDIA's OpenSM where the definition needs it")
    found.update(step["vars"])
    return bool(render("{{ " + step["ansible.builtin.assert"]["that"] + " }}", found))


@pytest.mark.parametrize(
    ("stdout", "options", "ok"),
    [
        ("OpenSM 3.3.23\n", {}, True),  # nothing NVIDIA-only asked: the distribution's opensm is fine
        ("OpenSM 3.3.23\n", {"opensm_sharp": True}, False),  # SHARP_am needs 5.20
        ("OpenSM 5.18.0\n", {"opensm_sharp": True}, False),
        ("OpenSM 5.20.0\n", {"opensm_sharp": True}, True),
        ("OpenSM 3.3.23\n", {"opensm_routing_engine": "ar_updn"}, False),  # the ar_* engines are NVIDIA's
        ("OpenSM 5.10.1\n", {"opensm_adaptive_routing": True, "opensm_routing_engine": "ar_updn"}, True),
        ("Unrecognized token\n", {"opensm_nvidia": True}, False),
    ],
)
def test_the_opensm_version_gate(stdout: str, options: dict[str, Any], ok: bool) -> None:
    assert _version_gate(stdout, **options) is ok


def _readback(ar_out: str | None, sharp_out: str | None, switches: int) -> list[str]:
    found = role_vars("opensm")
    found.update(
        {
            "opensm_ib": {},
            "opensm_ib_switches": switches,
            "__opensm_ibdiag_ar": {"stdout": ar_out, "rc": 0} if ar_out is not None else {"skipped": True},
            "__opensm_ibdiag_sharp": {"stdout": sharp_out, "rc": 0} if sharp_out is not None else {"skipped": True},
        }
    )
    step = task("opensm", "ib_features.yml", "Verify | every switch of the plan runs adaptive routing")
    found.update(step["vars"])
    return list(render("{{ _problems }}", found))


def test_the_read_back_passes_the_published_outputs_and_names_a_short_fabric() -> None:
    ar = (DATA / "ar-3-switches.txt").read_text(encoding="utf-8")
    sharp = (DATA / "sharp-4-switches.txt").read_text(encoding="utf-8")
    assert _readback(ar, None, 3) == []
    assert _readback(None, sharp, 4) == []
    assert _readback(None, None, 4) == []  # both off: nothing run, nothing asserted
    problems = _readback(ar, sharp, 4)  # a plan of 4 switches: the AR output shows 3
    assert problems == ['adaptive routing is enabled on 3 of 4 InfiniBand switches (ibdiagnet: "Adaptive Routing is enabled on 3 switches")']


def test_the_example_inventory_hands_the_roles_what_they_check() -> None:
    gb = host_vars(SHARP_SITE, "gb01")
    sm = host_vars(SHARP_SITE, "sm01")
    assert gb["gpufabric_arch"] == "arm64"
    assert sm["gpufabric_arch"] == "x86_64"
    assert {k: sm["gpufabric_infiniband"][k] for k in ("sharp", "adaptive_routing", "nvidia_opensm", "switches")} == {
        "sharp": True,
        "adaptive_routing": True,
        "nvidia_opensm": True,
        "switches": 18,
    }
    env = gb["gpufabric_nccl_env"]
    assert (env["NCCL_COLLNET_ENABLE"], env["SHARP_COLL_ENABLE_SAT"], env["NCCL_IB_ADAPTIVE_ROUTING"]) == ("1", "1", "1")
    plain = host_vars(site("onprem-ib"), "dgx01")["gpufabric_nccl_env"]
    assert not {"NCCL_COLLNET_ENABLE", "NCCL_IB_ADAPTIVE_ROUTING"} & set(plain)  # negative control: off by default


@pytest.mark.parametrize("role", ["gpu_driver", "rdma_stack"])
@pytest.mark.parametrize(
    ("declared", "gathered", "ok"),
    [("arm64", "aarch64", True), ("x86_64", "x86_64", True), ("arm64", "x86_64", False), ("x86_64", "aarch64", False), (None, "aarch64", True)],
)
def test_the_profile_architecture_is_checked_against_the_node(role: str, declared: str | None, gathered: str, ok: bool) -> None:
    found: dict[str, Any] = {"ansible_facts": facts("Ubuntu", "24.04", "Debian", arch=gathered), "inventory_hostname": "gb01"}
    if declared is not None:
        found["gpufabric_arch"] = declared
    step = task(role, "preflight.yml", "Preflight | the CPU architecture the node's hardware profile declares")
    assert all(render("{{ " + c + " }}", found) for c in step["ansible.builtin.assert"]["that"]) is ok
