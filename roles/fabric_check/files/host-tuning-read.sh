# fabric_check: read back the host tuning GPUDirect depends on, one fact per line, for the filter
# gpufabric_host_tuning_report. Read-only (setpci without '=' only reads). Run with bash by ansible.builtin.script.
#   host-tuning-read.sh SYSFS PROCFS SETPCI [HCA ...]
# Lines:
#   governor <cpuN> <governor>                      every CPU with cpufreq
#   numa_balancing <0|1>                            /proc/sys/kernel/numa_balancing
#   cmdline <kernel command line>
#   gpu_relaxed_ordering <n>                        the NVIDIA driver's EnablePCIERelaxedOrderingMode
#   setpci missing                                  pciutils absent: nothing below could be read
#   device <bdf> <gpu|nic> <hca|-> <iommu group type|none> <numa node>
#   devctl <bdf> <PCIe Device Control, 4 hex digits|unreadable>    (NICs: relaxed ordering, MaxReadReq)
#   bridge <bdf> <device bdf> <ACS control, 4 hex digits|none>     every bridge above a GPU or NIC
#   missing <hca>                                   an RDMA device of the definition that sysfs does not have
set -u
sysfs=$1 procfs=$2 setpci=$3
shift 3
bdf_re='^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$'
have_setpci=1
command -v "$setpci" >/dev/null 2>&1 || { have_setpci=0; echo "setpci missing"; }

for f in "$sysfs"/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do
    [[ -e $f ]] || continue
    cpu=${f%/cpufreq/*}
    echo "governor ${cpu##*/} $(<"$f")"
done
[[ -r $procfs/sys/kernel/numa_balancing ]] && echo "numa_balancing $(<"$procfs/sys/kernel/numa_balancing")"
[[ -r $procfs/cmdline ]] && echo "cmdline $(<"$procfs/cmdline")"
if [[ -r $procfs/driver/nvidia/params ]]; then
    awk -F': *' '$1 == "EnablePCIERelaxedOrderingMode" {print "gpu_relaxed_ordering " $2}' "$procfs/driver/nvidia/params"
fi

# device KIND HCA PATH: the device, its IOMMU group's type and NUMA node, every bridge above it (the parent
# directories of its sysfs path named by a BDF) with its ACS control
device() {
    local kind=$1 hca=$2 path=$3 bdf type=none dir
    bdf=${path##*/}
    [[ -e $path/iommu_group ]] && type=$(cat "$path/iommu_group/type" 2>/dev/null || echo unknown)
    echo "device $bdf $kind $hca $type $(cat "$path/numa_node" 2>/dev/null || echo -1)"
    ((have_setpci)) || return 0
    if [[ $kind == nic ]]; then echo "devctl $bdf $("$setpci" -s "$bdf" CAP_EXP+08.w 2>/dev/null || echo unreadable)"; fi
    dir=${path%/*}
    while [[ ${dir##*/} =~ $bdf_re ]]; do
        echo "bridge ${dir##*/} $bdf $("$setpci" -s "${dir##*/}" ECAP_ACS+0x6.w 2>/dev/null || echo none)"
        dir=${dir%/*}
    done
}

for d in "$sysfs"/bus/pci/devices/*; do
    [[ -r $d/vendor && -r $d/class ]] || continue
    # NVIDIA (0x10de) 3D controller (0x0302) or VGA controller (0x0300): the GPUs
    if [[ $(<"$d/vendor") == 0x10de && $(<"$d/class") == 0x030[02]* ]]; then device gpu - "$(readlink -f "$d")"; fi
done
for hca in "$@"; do
    if [[ -e $sysfs/class/infiniband/$hca/device ]]; then
        device nic "$hca" "$(readlink -f "$sysfs/class/infiniband/$hca/device")"
    else
        echo "missing $hca"
    fi
done
exit 0
