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
- Arista: no published AI back-end design with ECN numbers could be verified this round (the deployment guides found
  show the section headings only); not reproduced.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render import render_configs
from tests.conftest import DATA


def _cumulus(tmp_path: Path, roce: dict[str, object]) -> str:
    data = yaml.safe_load((DATA / "render" / "cumulus" / "cluster.yaml").read_text())
    data["roce"] = roce
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump(data))
    return render_configs(plan_cluster(load_cluster(tmp_path / "cluster.yaml")))["switches/leaf01/nvue.sh"]


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
