"""The EOS and NX-OS gNMI subscriptions: every path the export writes is a node of the YANG the NOS publishes, or (NX-OS
native model) a path Cisco's sensor-path table gives (extracts and sources in tests/data/gnmi-yang/), on each switch's
gNMI port."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import yaml

from fabric.export.telemetry.gnmi import gnmic_config
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.types import ClusterPlan
from tests.conftest import DATA

EOS_EXTRACT = DATA / "gnmi-yang" / "eos-4.36.1F.paths"
KEY = re.compile(r"\[([a-z][a-z0-9-]*)=[^\]]*\]")


def schema_path(path: str) -> str:
    """``/a[k=v]/b`` → ``/a[k]/b``: the schema node a gNMI path addresses, list keys by name."""
    return KEY.sub(r"[\1]", path)


def eos_schema() -> set[str]:
    lines = EOS_EXTRACT.read_text().splitlines()
    return {line.split("\t")[0] for line in lines if line and not line.startswith("#")}


def eos_config(name: str) -> tuple[dict[str, Any], ClusterPlan]:
    plan = plan_cluster(load_cluster(DATA / "render" / name / "cluster.yaml"))
    return yaml.safe_load(gnmic_config(plan)), plan


def test_every_eos_path_is_a_node_of_the_published_yang() -> None:
    schema = eos_schema()
    config, _ = eos_config("eos-3tier")
    paths = config["subscriptions"]["eos-fabric"]["paths"]
    assert len(paths) == 12
    assert [p for p in paths if schema_path(p) not in schema] == []


def test_the_yang_check_refuses_a_wrong_key_or_leaf() -> None:
    schema = eos_schema()
    assert schema_path("/interfaces/interface[name=*]/state/counters/in-errors") in schema
    assert schema_path("/interfaces/interface[ifname=*]/state/counters/in-errors") not in schema
    assert schema_path("/qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state/max-queue-len") not in schema


def test_eos_switches_are_targets_on_6030_with_the_roce_priority() -> None:
    for name in ("eos-3tier", "eos-unnumbered"):
        config, plan = eos_config(name)
        assert plan.fabric is not None
        switches = {s.name: s for s in plan.fabric.switches if s.nos == "eos"}
        assert sorted(t["name"] for t in config["targets"].values()) == sorted(switches)
        for address, target in config["targets"].items():
            assert address == f"{switches[target['name']].mgmt_address.split('/')[0]}:6030"
            assert target["subscriptions"] == ["eos-fabric"]
        prio = plan.roce.priority
        paths = config["subscriptions"]["eos-fabric"]["paths"]
        assert f"/interfaces/interface[name=*]/ethernet/pfc/priorities/priority[index={prio}]/state/in-frames" in paths


NXOS_EXTRACT = DATA / "gnmi-yang" / "nxos-10.6-3.paths"


def nxos_support() -> dict[str, str]:
    """Schema path -> supported / not-supported, as the NX-OS 10.6(3) deviations say (tests/data/gnmi-yang/SOURCES.md)."""
    lines = NXOS_EXTRACT.read_text().splitlines()
    return {fields[0]: fields[1] for fields in (line.split("\t") for line in lines if line and not line.startswith("#"))}


NXOS_NATIVE_EXTRACT = DATA / "gnmi-yang" / "nxos-native.paths"
NATIVE_ORIGIN = "device:"  # cisco-ie/cisco-gnmi-python src/cisco_gnmi/nx.py: Cisco-NX-OS-device paths have origin "device"


def nxos_native() -> dict[str, str]:
    """Native-model path -> its metric, as CiscoSE/NexusProgrammability's sensor-path table gives it (SOURCES.md)."""
    lines = NXOS_NATIVE_EXTRACT.read_text().splitlines()
    return dict(line.split("\t") for line in lines if line and not line.startswith("#"))


def nxos_paths(name: str) -> list[str]:
    plan = plan_cluster(load_cluster(DATA / "render" / name / "cluster.yaml"))
    return yaml.safe_load(gnmic_config(plan))["subscriptions"]["nxos-fabric"]["paths"]


def test_every_nxos_openconfig_path_is_a_node_nxos_does_not_deviate() -> None:
    support = nxos_support()
    paths = [p for p in nxos_paths("nxos-3tier") if not p.startswith(NATIVE_ORIGIN)]
    assert len(paths) == 5
    assert {p: support.get(schema_path(p)) for p in paths} == dict.fromkeys(paths, "supported")


def test_every_nxos_native_path_is_one_ciscos_table_gives_with_origin_device() -> None:
    native = nxos_native()
    paths = [p.removeprefix(NATIVE_ORIGIN) for p in nxos_paths("nxos-3tier") if p.startswith(NATIVE_ORIGIN)]
    assert [p for p in paths if p not in native] == []
    leaves = {p.rsplit("/", 1)[1] for p in paths}
    # the signals the issue names and NX-OS's OpenConfig lacks: PFC pauses both ways, the watchdog, ECN marks, queue depth
    assert {"pfcRxPpp", "pfcTxPpp", "pfcwdShutdownCount", "pfcwdRestoredCount", "randEcnMarkedPackets", "currQueueDepth"} <= leaves
    assert not [p for p in nxos_paths("nxos-3tier") if p.startswith("/System")]  # a native path without its origin reads nothing


def test_the_native_check_refuses_a_leaf_cisco_does_not_list() -> None:
    native = nxos_native()
    queue = "/System/ipqos-items/queuing-items/policy-items/out-items/intf-items/If-list/queCmap-items/QueuingStats-list"
    assert f"{queue}/pfcRxPpp" in native
    assert f"{queue}/pfcRxPause" not in native
    assert f"{queue}/maxQueueDepth" not in native


def test_the_nxos_check_refuses_what_cisco_deviates() -> None:
    support = nxos_support()
    queue = "/qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state"
    assert support[schema_path(f"{queue}/ecn-marked-pkts")] == "not-supported"
    assert support[schema_path(f"{queue}/max-queue-len")] == "not-supported"
    assert support[schema_path("/interfaces/interface[name=*]/state/counters/link-transitions")] == "not-supported"


def test_nxos_switches_are_targets_on_50051_and_the_header_says_what_the_native_model_gives() -> None:
    plan = plan_cluster(load_cluster(DATA / "render" / "nxos" / "cluster.yaml"))
    assert plan.fabric is not None
    text = gnmic_config(plan)
    targets = yaml.safe_load(text)["targets"]
    assert {address: t["name"] for address, t in targets.items()} == {f"{s.mgmt_address.split('/')[0]}:50051": s.name for s in plan.fabric.switches}
    assert "# nxos: PFC pauses, PFC watchdog, ECN marks and queue depth come from the native model (origin device" in text
    assert "only in the native" not in text


def test_switches_of_an_uncovered_nos_beside_eos_are_named_as_not_covered() -> None:
    _, plan = eos_config("eos-3tier")
    assert plan.fabric is not None
    first, *rest = plan.fabric.leaves
    mixed = replace(plan, fabric=replace(plan.fabric, leaves=(replace(first, nos="mlnxos"), *rest)))
    text = gnmic_config(mixed)
    assert f"# not covered (no sourced gNMI paths for their NOS yet, see README): {first.name}\n" in text
    assert first.name not in {t["name"] for t in yaml.safe_load(text)["targets"].values()}
