"""rdma_stack, nic_firmware and host_tuning without a node (issue 29 part B): the nvconfig plan against the stub
mlxconfig that prints published captures, the handlers' choice between openibd and a reboot, the openibd blocker
script and the host tuning boot script on fake trees, and the role files that carry each fix."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from plugins.filter.gpufabric_nvconfig import nvconfig_cards, nvconfig_query, nvconfig_set_args, nvconfig_skipped, nvconfig_wanted
from tests.conftest import ROOT
from tests.roles.nic_tools import DATA
from tests.roles.stubs import fake_firmware, fake_nic, role_templates, write_tree

ROLES = ROOT / "roles"
# nic_firmware's plan as the role builds it (vars/main.yml) from its defaults, with the onprem-roce CNP marking
PLAN: dict[str, Any] = {
    "settings": {"ATS_ENABLED": 0, "MAX_ACC_OUT_READ": 0},
    "port_settings": {"LINK_TYPE": 2, "ROCE_CC_PRIO_MASK": 255, "CNP_DSCP": 48, "CNP_802P_PRIO": 6},
    "optional": ["MAX_ACC_OUT_READ", "LINK_TYPE"],
    "default_only": ["MAX_ACC_OUT_READ"],
}


def role_yaml(path: str) -> Any:
    return yaml.safe_load((ROLES / path).read_text(encoding="utf-8"))


def test_the_plan_in_the_defaults_is_the_one_these_tests_use() -> None:
    defaults = role_yaml("nic_firmware/defaults/main.yml")
    assert defaults["nic_firmware_settings"] == PLAN["settings"]
    assert {k: v for k, v in defaults["nic_firmware_port_settings"].items() if isinstance(v, int)} == {"LINK_TYPE": 2, "ROCE_CC_PRIO_MASK": 255}
    assert defaults["nic_firmware_optional"] == PLAN["optional"]
    assert defaults["nic_firmware_default_only"] == PLAN["default_only"]
    assert role_yaml("nic_firmware/vars/main.yml")["_nic_firmware_plan"] == {
        "settings": "{{ nic_firmware_settings }}",
        "port_settings": "{{ nic_firmware_port_settings }}",
        "optional": "{{ nic_firmware_optional }}",
        "default_only": "{{ nic_firmware_default_only }}",
    }


def mlxconfig(tmp_path: Path, *args: str, functions: int = 1, defaults: str = "", hidden: str = "") -> str:
    """Run the stub mlxconfig of a card with ``functions`` ports (one RDMA device each) and return its output."""
    stubs = tmp_path / "stubs"
    if not stubs.exists():
        write_tree(tmp_path, fake_firmware([f"mlx5_{n}" for n in range(functions)], "28.39.1002", functions=functions))
        (stubs / "defaults").write_text(defaults)
        (stubs / "hidden").write_text(hidden)
    done = subprocess.run([str(stubs / "mlxconfig"), *args], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_parser_reads_the_published_captures() -> None:
    """The operator's own -e fixture (Default/Current/Next Boot, '*' rows, an Array) and a ConnectX-7's plain query."""
    operator = nvconfig_query((DATA / "mlxconfig-e-query.txt").read_text(encoding="utf-8"))
    assert operator["KEEP_IB_LINK_UP_P2"] == {"default": 0, "current": 1, "next": 1}
    assert operator["MEMIC_SIZE_LIMIT"] == {"default": 1, "current": 1, "next": 0}
    assert operator["ESWITCH_HAIRPIN_DESCRIPTORS"]["next"] == "Array[0..7]"
    cx7 = nvconfig_query((DATA / "mlxconfig-query-connectx7.txt").read_text(encoding="utf-8"))
    assert cx7 == {"NUM_OF_VFS": {"next": 8}, "SRIOV_EN": {"next": 1}, "LINK_TYPE_P1": {"next": 2}}


def test_the_stubs_print_the_captured_layout(tmp_path: Path) -> None:
    """The stub's header, column positions and trailer are the captures' (not a format of our own)."""
    out = mlxconfig(tmp_path, "-d", "0000:18:00.0", "-e", "query").splitlines()
    capture = (DATA / "mlxconfig-e-query.txt").read_text(encoding="utf-8").splitlines()
    header = next(line for line in capture if line.startswith("Configurations:"))
    assert header in out
    assert out[-1] == next(line for line in capture if line.startswith("The '*'"))
    cx7 = (DATA / "mlxconfig-query-connectx7.txt").read_text(encoding="utf-8").splitlines()
    assert next(line for line in cx7 if line.startswith("Description:")) in out
    row = next(line for line in out if "LINK_TYPE_P1" in line)
    assert row.index("IB(1)") == header.index("Default")
    flint = subprocess.run([str(tmp_path / "stubs" / "flint"), "-d", "0000:18:00.0", "q"], capture_output=True, text=True, check=True)
    assert "FW Version:            28.39.1002" in flint.stdout.splitlines()
    assert "PSID:                  MT_0000001244" in flint.stdout.splitlines()


def test_roce_ports_become_ethernet_on_every_port_of_a_dual_port_card_link_type_first(tmp_path: Path) -> None:
    """F8 + F5: a factory ConnectX-7 (ports InfiniBand) with two ports gets LINK_TYPE_P1/P2=2 (ETH) first, then every
    RoCE setting for P1 and P2."""
    out = mlxconfig(tmp_path, "-d", "0000:18:00.0", "-e", "query", functions=2)
    args = nvconfig_set_args(out, PLAN)
    assert args[:2] == ["LINK_TYPE_P1=2", "LINK_TYPE_P2=2"]
    for port in (1, 2):
        assert {f"ROCE_CC_PRIO_MASK_P{port}=255", f"CNP_DSCP_P{port}=48"} <= set(args)
    assert "CNP_802P_PRIO_P1=6" not in args  # already the default: not written
    assert "ATS_ENABLED=0" in args


def test_link_type_is_skipped_on_a_card_that_cannot_change_it(tmp_path: Path) -> None:
    out = mlxconfig(tmp_path, "-d", "0000:18:00.0", "-e", "query", hidden="LINK_TYPE_P1")
    assert not [a for a in nvconfig_set_args(out, PLAN) if a.startswith("LINK_TYPE")]
    assert nvconfig_wanted(out, PLAN)["skipped"] == ["LINK_TYPE_P<n>: not listed by this NIC"]


@pytest.mark.parametrize(("default", "written"), [(0, False), (44, False)])
def test_max_acc_out_read_is_written_only_where_its_default_is_zero(tmp_path: Path, default: int, written: bool) -> None:
    """F6: the operator writes 0 only where the default is 0 (already 0 here: nothing to write); on firmware whose default
    is 44 it skips the parameter with a warning instead of forcing 0."""
    out = mlxconfig(tmp_path, "-d", "0000:18:00.0", "-e", "query", defaults=f"MAX_ACC_OUT_READ={default}")
    assert any(a.startswith("MAX_ACC_OUT_READ") for a in nvconfig_set_args(out, PLAN)) is written
    skipped = nvconfig_skipped([{"item": {"devices": ["mlx5_0"]}, "rc": 0, "stdout": out}], PLAN)
    assert skipped == (
        [] if default == 0 else ["mlx5_0: MAX_ACC_OUT_READ: default 44, not 0 (firmware without the auto mode: skipped, as the operator does)"]
    )


def test_max_acc_out_read_zero_is_written_where_the_default_is_zero_and_the_next_boot_is_not() -> None:
    out = "Configurations:    Default    Current    Next Boot\n         MAX_ACC_OUT_READ    0    32    32\n"
    assert nvconfig_set_args(out, {"settings": {"MAX_ACC_OUT_READ": 0}, "default_only": ["MAX_ACC_OUT_READ"]}) == ["MAX_ACC_OUT_READ=0"]


def test_a_hidden_parameter_is_skipped_not_queried_by_name(tmp_path: Path) -> None:
    """F7: the role queries everything (-e query, as the operator does) and never names a parameter the NIC hides."""
    out = mlxconfig(tmp_path, "-d", "0000:18:00.0", "-e", "query", hidden="MAX_ACC_OUT_READ")
    assert "MAX_ACC_OUT_READ" not in out
    assert not [a for a in nvconfig_set_args(out, PLAN) if a.startswith("MAX_ACC_OUT_READ")]
    tasks = (ROLES / "nic_firmware/tasks/main.yml").read_text(encoding="utf-8")
    assert tasks.count('"-e", "query"]') == 2  # the read before writing and the read-back
    assert "'q']" not in tasks


def test_two_functions_of_one_card_are_one_card() -> None:
    results = [{"item": f"mlx5_{n}", "stdout": f"/sys/devices/pci0000:00/0000:18:00.{n}"} for n in (1, 0)]
    results.append({"item": "mlx5_9", "stdout": "/srv/fw/sys/class/infiniband/mlx5_9/device"})  # no PCI function
    assert nvconfig_cards(results) == [{"card": "0000:18:00", "bdf": "0000:18:00.0", "devices": ["mlx5_0", "mlx5_1"]}]


def test_nvconfig_changes_reboot_one_node_at_a_time_before_nic_qos() -> None:
    """The reboot handler is on by default and throttled; the role flushes it before its verify (so before nic_qos)."""
    assert role_yaml("nic_firmware/defaults/main.yml")["nic_firmware_reboot"] is True
    [reboot] = [h for h in role_yaml("nic_firmware/handlers/main.yml") if "ansible.builtin.reboot" in h]
    assert (reboot["throttle"], reboot["listen"]) == (1, "nic_firmware_reboot")
    tasks = role_yaml("nic_firmware/tasks/main.yml")
    names = [t["name"] for t in tasks]
    flush = next(i for i, t in enumerate(tasks) if t.get("ansible.builtin.meta") == "flush_handlers")
    assert (
        names.index("Configure | set what differs, LINK_TYPE first (takes effect at the next boot)")
        < flush
        < names.index("Verify | read every setting back")
    )


def handlers_that_run(**facts: object) -> list[str]:
    """Names of rdma_stack's handlers whose ``when`` holds for ``facts`` (the role's defaults underneath)."""
    variables = {**role_yaml("rdma_stack/defaults/main.yml"), **facts}
    templar = Templar(loader=DataLoader(), variables=variables)
    return [h["name"] for h in role_yaml("rdma_stack/handlers/main.yml") if templar.evaluate_conditional(trust_as_template(h["when"]))]


def test_new_doca_modules_reboot_by_default_and_openibd_only_where_nothing_blocks_it() -> None:
    """R7: the default is the one-at-a-time reboot; openibd only when asked and the blocker check found nothing; asked
    but blocked (nvidia_peermem, a ConnectX management path) or never checked: a reboot, with the reason said."""
    assert handlers_that_run() == ["Reboot into the new RDMA modules"]
    assert handlers_that_run(rdma_stack_reboot=False, _rdma_stack_openibd_blockers=[]) == ["Reload the RDMA stack (openibd)"]
    blocked = handlers_that_run(rdma_stack_reboot=False, _rdma_stack_openibd_blockers=["nvidia_peermem is loaded"])
    assert blocked == ["Say why the node reboots instead of restarting openibd", "Reboot into the new RDMA modules"]
    assert handlers_that_run(rdma_stack_reboot=False) == blocked  # never checked counts as blocked
    assert handlers_that_run(rdma_stack_manage_hardware=False) == []
    assert all(h.get("throttle") == 1 for h in role_yaml("rdma_stack/handlers/main.yml") if "ansible.builtin.debug" not in h)


IP_STUB = """#!/bin/sh
# stub ip: -o addr show / -o route show default from the files next to it
case "$*" in
"-o addr show") cat "$(dirname "$0")/addr" ;;
"-o route show default") cat "$(dirname "$0")/route" ;;
esac
"""


def blockers(tmp_path: Path, addr: str, *, peermem: bool = False, links: dict[str, str] | None = None) -> list[str]:
    """Run files/openibd-blockers.sh over a fake sysfs: ``links`` maps netdev → driver (``bond0>eno1``: a lower link)."""
    sysfs, bin_dir = tmp_path / "sys", tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "ip").write_text(IP_STUB)
    (bin_dir / "ip").chmod(stat.S_IRWXU)
    (bin_dir / "addr").write_text(addr)
    (bin_dir / "route").write_text("default via 10.0.0.1 dev eno1 proto static\n")
    if peermem:
        (sysfs / "module/nvidia_peermem").mkdir(parents=True)
    for netdev, target in (links or {}).items():
        if ">" in netdev:
            upper, lower = netdev.split(">")
            (sysfs / "class/net" / upper).mkdir(parents=True, exist_ok=True)
            (sysfs / "class/net" / upper / f"lower_{lower}").symlink_to(sysfs / "class/net" / lower)
            continue
        (sysfs / "bus/pci/drivers" / target).mkdir(parents=True, exist_ok=True)
        (sysfs / "class/net" / netdev / "device").mkdir(parents=True, exist_ok=True)
        (sysfs / "class/net" / netdev / "device/driver").symlink_to(sysfs / "bus/pci/drivers" / target)
    script = ROLES / "rdma_stack/files/openibd-blockers.sh"
    done = subprocess.run(
        ["/bin/bash", str(script), str(sysfs), "192.0.2.10", str(bin_dir / "ip")], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_openibd_is_blocked_by_nvidia_peermem_and_by_a_connectx_management_path(tmp_path: Path) -> None:
    on_igb = "2: eno1    inet 192.0.2.10/24 brd 192.0.2.255 scope global eno1\n"
    assert blockers(tmp_path / "a", on_igb, links={"eno1": "igb", "enp170s0f1np1": "mlx5_core"}) == []
    assert blockers(tmp_path / "b", on_igb, peermem=True, links={"eno1": "igb"}) == [
        "nvidia_peermem is loaded (openibd cannot reload ib_uverbs under it)"
    ]
    # the DGX in-band port (catalog dgx-b200: enp170s0f1np1) in a bond carries the connection
    on_bond = "7: bond0    inet 192.0.2.10/24 brd 192.0.2.255 scope global bond0\n"
    links = {"enp170s0f1np1": "mlx5_core", "eno1": "igb", "bond0>enp170s0f1np1": ""}
    assert blockers(tmp_path / "c", on_bond, links=links) == [
        "bond0 carries the connection to 192.0.2.10 and rides on ConnectX port enp170s0f1np1 (openibd removes every mlx5 netdev)"
    ]


def test_docas_firmware_updater_flashes_nothing_unless_asked() -> None:
    """RDMA-13: the DOCA profile installs with RUN_FW_UPDATER=no unless rdma_stack_doca_firmware_update, on apt and dnf,
    and openib.conf keeps RUN_FW_UPDATER_ONBOOT=no."""
    assert role_yaml("rdma_stack/defaults/main.yml")["rdma_stack_doca_firmware_update"] is False
    for packager in ("apt", "dnf"):
        tasks = role_yaml(f"rdma_stack/tasks/install_{packager}.yml")
        [profile] = [t for t in tasks if t["name"] == "Install | DOCA profile"]
        assert profile["environment"] == "{{ {} if _rdma_stack_plan.firmware_update else {'RUN_FW_UPDATER': 'no'} }}"
        [onboot] = [t for t in tasks if "ansible.builtin.lineinfile" in t]
        assert onboot["ansible.builtin.lineinfile"]["line"] == "RUN_FW_UPDATER_ONBOOT=no"
    plan = (ROLES / "rdma_stack/tasks/plan.yml").read_text(encoding="utf-8")
    assert "rdma_stack_doca_firmware_update | bool" in plan


def tuning_script(tmp_path: Path, wait: int) -> tuple[Path, Path]:
    """host_tuning's script and settings rendered for NIC mlx5_0 over an empty fake sysfs with a stub setpci."""
    sysfs = tmp_path / "sys"
    sysfs.mkdir()
    calls = tmp_path / "calls.log"
    setpci = tmp_path / "setpci"
    setpci.write_text(f'#!/bin/sh\necho "setpci $*" >> {calls}\n[ "${{3#*=}}" = "$3" ] && echo 2930\nexit 0\n')
    setpci.chmod(stat.S_IRWXU)
    templates = role_templates(ROLES / "host_tuning")
    values = {
        "ansible_managed": "managed by gpufabric",
        "gpufabric_cluster": "t",
        "host_tuning_cpu_governor": "performance",
        "host_tuning_acs_disable": False,
        "host_tuning_sysfs": str(sysfs),
        "host_tuning_setpci": str(setpci),
        "host_tuning_lspci": "true",
        "host_tuning_nic_devices": ["mlx5_0"],
        "host_tuning_nic_max_read_request": 4096,
        "host_tuning_nic_relaxed_ordering": True,
        "host_tuning_nic_wait_seconds": wait,
        "_host_tuning_env": str(tmp_path / "host-tuning.env"),
    }
    env = tmp_path / "host-tuning.env"
    env.write_text(templates.get_template("host-tuning.env.j2").render(values))
    script = tmp_path / "gpufabric-host-tuning"
    script.write_text(templates.get_template("gpufabric-host-tuning.j2").render(values))
    return script, calls


def appear_later(path: Path, seconds: float) -> threading.Timer:
    """Make ``path`` (an RDMA device's sysfs link) exist after ``seconds``, as mlx5_ib registers it at boot."""

    def make() -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to("/sys/devices/pci0000:00/0000:19:00.0")

    timer = threading.Timer(seconds, make)
    timer.start()
    return timer


@pytest.mark.parametrize(("wait", "when", "applied"), [(10, "boot", True), (0, "boot", False), (10, "", False)])
def test_the_boot_script_waits_bounded_for_an_rdma_device_that_registers_late(tmp_path: Path, wait: int, when: str, applied: bool) -> None:
    """H8: the NIC appears 1 s after the unit starts; with the wait its MaxReadReq is written, without it (0 s) skipped.
    Only the boot run waits (a role run on a node without the device fails its verify at once)."""
    script, calls = tuning_script(tmp_path, wait)
    timer = appear_later(tmp_path / "sys/class/infiniband/mlx5_0/device", 1.0)
    started = time.monotonic()
    subprocess.run(
        ["/bin/bash", str(script), "apply", *([when] if when else [])], capture_output=True, text=True, timeout=60, check=False, env={**os.environ}
    )
    timer.join()
    assert time.monotonic() - started < wait + 5
    unit = (ROLES / "host_tuning/templates/gpufabric-host-tuning.service.j2").read_text(encoding="utf-8")
    assert "ExecStart=/bin/bash {{ _host_tuning_script }} apply boot" in unit.splitlines()
    writes = calls.read_text().splitlines() if calls.exists() else []
    assert ("setpci -s 0000:19:00.0 CAP_EXP+08.w=5000:7000" in writes) is applied


def test_the_boot_unit_is_ordered_after_the_rdma_devices() -> None:
    unit = (
        role_templates(ROLES / "host_tuning")
        .get_template("gpufabric-host-tuning.service.j2")
        .render({"ansible_managed": "m", "_host_tuning_script": "/usr/local/sbin/gpufabric-host-tuning"})
    )
    assert "Wants=systemd-udev-settle.service" in unit.splitlines()
    assert "After=systemd-modules-load.service systemd-udev-settle.service openibd.service" in unit.splitlines()


def test_host_tuning_installs_pciutils_masks_ondemand_and_gives_el_iommu_pt() -> None:
    """H11, H2, H7: pciutils is installed (the script calls setpci/lspci), Ubuntu's ondemand.service is masked where it
    is loaded, EL gets the kernel arguments through grubby on every kernel, and the verify names how."""
    defaults = role_yaml("host_tuning/defaults/main.yml")
    assert defaults["host_tuning_packages"] == ["pciutils"]
    assert defaults["host_tuning_mask_ondemand"] is True
    tasks = {t["name"]: t for t in role_yaml("host_tuning/tasks/main.yml")}
    install = tasks["Install | the PCI tools the boot script calls (setpci, lspci)"]
    assert install["ansible.builtin.package"]["name"] == "{{ host_tuning_packages }}"
    mask = tasks["Configure | mask it, so the boot unit's governor stays"]["ansible.builtin.systemd_service"]
    assert (mask["name"], mask["masked"]) == ("{{ _host_tuning_ondemand }}", True)
    assert role_yaml("host_tuning/vars/main.yml")["_host_tuning_ondemand"] == "ondemand.service"
    grubby = tasks["Configure | kernel command line on EL (IOMMU passthrough), effective at the next boot"]
    assert grubby["ansible.builtin.command"]["argv"][:2] == ["{{ host_tuning_grubby }}", "--update-kernel=ALL"]
    verdict = tasks["Verify | governors and ACS as planned; the kernel arguments in effect or waiting for a reboot"]
    assert "'RedHat': ' (grubby, every installed kernel)'" in verdict["ansible.builtin.assert"]["success_msg"]


def test_the_nic_qos_stub_prints_the_captured_mlnx_qos_layout(tmp_path: Path) -> None:
    """mlnx_qos as the capture shows it (tabs where the tool prints tabs): the map only under trust dscp, tc lines kept."""
    write_tree(tmp_path, fake_nic(["enp24s0np0"]))
    tool = tmp_path / "stubs" / "mlnx_qos"
    pcp = subprocess.run(
        [str(tool), "-i", "enp24s0np0"], capture_output=True, text=True, check=True, env={**os.environ, "STUB_DIR": str(tmp_path / "stubs")}
    )
    assert "dscp2prio mapping:" not in pcp.stdout
    for change in (["--trust", "dscp"], ["--pfc", "0,0,0,1,0,0,0,0"]):  # the capture's state
        subprocess.run(
            [str(tool), "-i", "enp24s0np0", *change], capture_output=True, check=True, env={**os.environ, "STUB_DIR": str(tmp_path / "stubs")}
        )
    dscp = subprocess.run(
        [str(tool), "-i", "enp24s0np0"], capture_output=True, text=True, check=True, env={**os.environ, "STUB_DIR": str(tmp_path / "stubs")}
    )
    capture = [line.replace(" " * 8, "\t", 1) for line in (DATA / "mlnx_qos-trust-dscp.txt").read_text().splitlines() if not line.startswith("#")]
    assert dscp.stdout.splitlines() == capture
