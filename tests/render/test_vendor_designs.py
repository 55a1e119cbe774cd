"""Published vendors' RoCE designs rebuilt as definitions: the rendered numbers equal theirs, or the test says why not.

- NVIDIA, Cumulus Linux 5.x user guide "RDMA over Converged Ethernet - RoCE", default lossless RoCE configuration
  (https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-56/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE/):
  switch priority 3 -> TC 3 (RoCE), 6 -> TC 6 (CNP); ETS TC 6 strict, TC 3 WRR 50 %, TC 0 WRR 50 %; PFC on priority 3;
  ECN on TC 3 from 150000 to 1500000 B at probability 100 (``nv show qos congestion-control default-global``).
- Juniper, Apstra RNIC configurator guide "Create and Import a DCQCN Configlet" (Apstra 6.1,
  https://www.juniper.net/documentation/us/en/software/apstra6.1/apstra-connectorops-rnic-configurator-guide/topics/concept/apstra-connectorops-rnic-configurator-guide-dcqcn-configlets.html):
  classifier CNP code-points 110000 (DSCP 48), NO-LOSS 011010 (DSCP 26) with ``pfc-priority 3`` and PFC on
  code-point 011010; drop profile ``fill-level [ 55 90 ] drop-probability [ 0 100 ]``. Its ECN thresholds are a
  percentage of the queue's buffer (Junos "Configuring CoS WRED Drop Profiles": fill level is "a percentage of the memory
  used to store packets in relation to the total amount of memory allocated to the queue"), which depends on the
  shared-buffer partition of the chip at run time: no byte value can be derived from the definition, and no Junos
  renderer exists; the classification, PFC priority and the 100 % marking at the top end are reproduced and asserted.
- Arista EOS, as AMD publishes it: ROCm "GPU cluster networking" guide, "RDMA over Converged Ethernet Configuration
  Guide", drop-down "Example - DCQCN configuration on an Arista 7388 switch"
  (https://rocm.docs.amd.com/projects/gpu-cluster-networking/en/latest/how-to/roce-network-config.html; source
  ROCm/gpu-cluster-networking docs/how-to/roce-network-config.rst at commit 1fc4a3348e3adde20672f317446240f5a0fe6271):
  ``qos map traffic-class 3 to dscp 26``, ``qos map traffic-class 7 to dscp 48`` (Broadcom Thor2's defaults: RoCE DSCP 26
  on priority 3, CNP DSCP 48 on priority 7, same guide), ``qos profile QOS_ROCE_DCQCN`` with ``qos trust dscp``,
  ``priority-flow-control on``, ``priority-flow-control priority 3 no-drop`` and on ``uc-tx-queue 3`` ``random-detect ecn
  minimum-threshold 2000 segments maximum-threshold 10000 segments max-mark-probability 20 weight 0``, ports at MTU 9214.
  Reproduced: classification, PFC, queue, marking probability and weight. Not reproduced: the thresholds, which are in
  ``segments`` (EOS's buffer cells, whose size is the ASIC's, not stated in the guide), while the rendered form takes
  ``kbytes`` (fabric/render/nos/eos/text.py ``qos``, pyavd ``units: kbytes``): no byte value follows from the published one.
  Arista's own "AI Network Fabric Deployment Guide" could not be read beyond its headings (the stored copy,
  manuals.plus/so/arista/ai-network-fabric-deployment-manual, summarises it without numbers); not reproduced.
- NVIDIA Spectrum-X: no published ECN/PFC number beyond the Cumulus ``qos roce`` defaults above was found this round.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_avd_configs, render_configs
from tests.conftest import DATA
from tests.render.test_avd_reference import avd_rendering, compare


def _plan(tmp_path: Path, case: str, roce: dict[str, object]) -> ClusterPlan:
    data = yaml.safe_load((DATA / "render" / case / "cluster.yaml").read_text())
    data["roce"] = roce
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump(data))
    return plan_cluster(load_cluster(tmp_path / "cluster.yaml"))


def _cumulus(tmp_path: Path, roce: dict[str, object]) -> str:
    return render_configs(_plan(tmp_path, "cumulus", roce))["switches/leaf01/nvue.sh"]


def test_nvidia_qos_roce_defaults_are_what_the_default_contract_renders(tmp_path: Path) -> None:
    text = _cumulus(tmp_path, {})  # nothing pinned: every value is the derived / default one
    lines = set(text.splitlines())
    assert {
        "nv set qos roce mode lossless",
        "nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3",
        "nv set qos egress-queue-mapping default-global switch-priority 6 traffic-class 6",
        "nv set qos egress-scheduler default-global traffic-class 6 mode strict",
        "nv set qos egress-scheduler default-global traffic-class 3 bw-percent 50",
        "nv set qos pfc default-global switch-priority 3",
        "nv set qos congestion-control default-global traffic-class 3 min-threshold 150000",
        "nv set qos congestion-control default-global traffic-class 3 max-threshold 1500000",
        "nv set qos congestion-control default-global traffic-class 3 probability 100",
        "nv set qos congestion-control default-global traffic-class 3 ecn enable",
    } <= lines


def test_juniper_apstra_dcqcn_configlet_classification_and_pfc(tmp_path: Path) -> None:
    cnp, no_loss = int("110000", 2), int("011010", 2)  # the configlet's DSCP code points
    assert (cnp, no_loss) == (48, 26)
    text = _cumulus(tmp_path, {"dscp": no_loss, "priority": 3, "traffic_class": 3, "pfc_priorities": [3], "cnp": {"dscp": cnp}})
    lines = set(text.splitlines())
    assert "nv set qos mapping default-global dscp 26 switch-priority 3" in lines
    assert "nv set qos mapping default-global dscp 48 switch-priority 6" in lines
    assert "nv set qos pfc default-global switch-priority 3" in lines
    # drop-probability [0 100]: nothing marked below the first fill level, every packet at the second
    assert "nv set qos congestion-control default-global traffic-class 3 probability 100" in lines


AMD_ARISTA_ROCE = {"dscp": 26, "priority": 3, "traffic_class": 3, "pfc_priorities": [3], "cnp": {"dscp": 48, "priority": 7, "traffic_class": 7}}
AMD_ARISTA_ECN = "random-detect ecn minimum-threshold 2000 segments maximum-threshold 10000 segments max-mark-probability 20 weight 0"


def _eos_lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines()}


def test_amd_arista_7388_dcqcn_example_on_eos_and_through_pyavd(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "eos", {**AMD_ARISTA_ROCE, "ecn": {"probability": 20}})
    text = render_configs(plan)["switches/leaf01/startup-config"]
    lines = _eos_lines(text)
    assert {
        "qos map dscp 26 to traffic-class 3",
        "qos map dscp 48 to traffic-class 7",
        "qos trust dscp",
        "priority-flow-control on",
        "priority-flow-control priority 3 no-drop",
        "uc-tx-queue 3",
        "mtu 9214",
    } <= lines
    assert [line for line in lines if line.startswith("priority-flow-control priority")] == ["priority-flow-control priority 3 no-drop"]
    (ecn,) = [line for line in lines if line.startswith("random-detect ecn")]
    # the published line, its segment thresholds swapped for the derived kbytes: everything else is theirs word for word
    assert ecn == AMD_ARISTA_ECN.replace("2000 segments", "150 kbytes").replace("10000 segments", "1500 kbytes")
    assert "service-profile ROCE" in lines
    # Arista's own generator renders the same structured config to the same commands (pyavd schema-validated)
    assert compare(text, avd_rendering("render/eos", "leaf01", plan)) == []
    assert "structured_configs/leaf01.yml" in render_avd_configs(plan)


def test_the_default_contract_is_not_the_amd_arista_design(tmp_path: Path) -> None:
    lines = _eos_lines(render_configs(_plan(tmp_path, "eos", {}))["switches/leaf01/startup-config"])
    assert "qos map dscp 48 to traffic-class 7" not in lines  # negative control: the definition above is what matches
    assert not any(line.endswith("max-mark-probability 20 weight 0") for line in lines)
