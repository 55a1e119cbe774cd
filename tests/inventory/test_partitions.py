"""InfiniBand partition members reach the SM hosts only: the inventory grows with SMs x hosts, not hosts x hosts."""

from __future__ import annotations

from fabric.inventory import onprem_host_vars
from fabric.model import load_cluster
from fabric.plan import plan_cluster


def test_partition_members_are_on_the_sm_hosts_only() -> None:
    plan = plan_cluster(load_cluster("inventories/onprem-ib/cluster.yaml"))
    assert plan.infiniband is not None
    seen = onprem_host_vars(plan)
    sm_hosts = {n.host for n in plan.infiniband.subnet_manager.nodes}
    assert sm_hosts
    assert sm_hosts <= set(seen)
    gpu_hosts = sorted(n.hostname for n in plan.nodes if n.group == "gpu")
    for host, found in seen.items():
        assert all("members" not in p for p in found["gpufabric_infiniband"]["partitions"]), host
        assert ("gpufabric_ib_partitions" in found) == (host in sm_hosts), host
    for host in sm_hosts:
        by_name = {p["name"]: p for p in seen[host]["gpufabric_ib_partitions"]}
        assert [p["name"] for p in seen[host]["gpufabric_infiniband"]["partitions"]] == list(by_name)
        members = sorted(m["host"] for m in by_name["gpu"]["members"])
        assert set(gpu_hosts) <= set(members)  # the gpu group resolved to its hosts
