"""host_tuning on EL 9 (H7): a booted bookworm container stands in for Rocky 9 (its OS facts replaced) with a stub
grubby over two installed kernels: iommu=pt reaches every kernel through grubby (no grub.d drop-in, which EL does not
read), the verify says so, and a second run changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.roles.containers import bookworm_image, booted
from tests.roles.scenario import changed, converge, explain, role_playbook, site
from tests.roles.stubs import fake_pci_host, pci_links

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]

PCI = "/srv/pci"

# grubby --info=ALL prints key=value lines per installed kernel (index, kernel, args, root, initrd, title), as in the
# RHEL 9 guide "Managing, monitoring and updating the kernel", "Listing the kernel command-line parameters"; the stub keeps
# the args per kernel in a file and logs every call.
GRUBBY = r"""#!/bin/sh
d=$(dirname "$0")
echo "grubby $*" >> "$d/calls.log"
[ -f "$d/grubby.args" ] || printf 'ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rd.lvm.lv=rl/root\nro rd.lvm.lv=rl/root\n' > "$d/grubby.args"
case "$1" in
--info=ALL)
    n=0
    while read -r args; do
        printf 'index=%s\nkernel="/boot/vmlinuz-5.14.0-%s.el9_4.x86_64"\nargs="%s"\nroot="/dev/mapper/rl-root"\n' "$n" "$((427 - n))" "$args"
        n=$((n + 1))
    done < "$d/grubby.args" ;;
--update-kernel=ALL)
    add=${2#--args=}
    sed -i "s|\$| $add|" "$d/grubby.args" ;;
esac
"""

ROCKY = {
    "distribution": "Rocky",
    "distribution_version": "9.4",
    "distribution_major_version": "9",
    "os_family": "RedHat",
    "architecture": "x86_64",
    "kernel": "5.14.0-427.13.1.el9_4.x86_64",
}


def test_el_gets_iommu_passthrough_on_every_kernel_through_grubby_and_the_verify_says_so(tmp_path: Path) -> None:
    bookworm_image()
    files = {f"{PCI}/{rel}": content for rel, content in fake_pci_host(2).items()}
    files[f"{PCI}/stubs/grubby"] = (GRUBBY, 0o755)
    tuning = {
        "host_tuning_sysfs": f"{PCI}/sys",
        "host_tuning_procfs": f"{PCI}/proc",
        "host_tuning_setpci": f"{PCI}/stubs/setpci",
        "host_tuning_lspci": f"{PCI}/stubs/lspci",
        "host_tuning_grubby": f"{PCI}/stubs/grubby",
        "host_tuning_packages": [],  # no dnf in a bookworm container
        "host_tuning_nic_devices": ["mlx5_0"],
    }
    play = role_playbook(tmp_path, "host_tuning", os_facts=ROCKY)
    with booted("gpu001", tmp_path, private_network=True, files=files) as node:
        assert node.run(pci_links(PCI)).returncode == 0
        first, events = converge(site("onprem-roce"), [node], play, tmp_path, extravars=tuning)
        assert first.ok, explain(first)
        updates = [c for c in node.read(f"{PCI}/stubs/calls.log").splitlines() if c.startswith("grubby --update-kernel")]
        assert updates == ["grubby --update-kernel=ALL --args=iommu=pt"]
        assert all(line.endswith(" iommu=pt") for line in node.read(f"{PCI}/stubs/grubby.args").splitlines())
        assert not (node.root / "etc/default/grub.d/60-gpufabric.cfg").exists()
        [verdict] = events.results("Verify | governors and ACS as planned")
        assert "iommu=pt after the next reboot (grubby, every installed kernel)" in verdict["msg"]

        second, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars=tuning)
        assert second.ok, explain(second)
        assert changed(second) == {"gpu001": 0}
        assert len([c for c in node.read(f"{PCI}/stubs/calls.log").splitlines() if c.startswith("grubby --update-kernel")]) == 1
