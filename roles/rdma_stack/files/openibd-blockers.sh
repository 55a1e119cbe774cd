# openibd-blockers.sh SYSFS ADDRESS [IP]: why restarting openibd on this node would fail or cut Ansible off, one reason
# a line (nothing: a restart is safe). Run with bash by the role (no shebang: the collection's sanity test). Read-only.
#   - nvidia_peermem loaded: "openibd found nvidia_peermem depending on ib_uverbs and could not complete the reload"
#     (Mellanox/doca-driver-build PR #481, which unloads nvidia_peermem first).
#   - the interface that holds ADDRESS (the address Ansible connects to; else the default route's) is, or sits on, a
#     ConnectX netdev (driver mlx5_core): unloading the driver "removes all NVIDIA NIC networking interfaces and
#     netdevices" (Mellanox/network-operator-docs release notes, 24.10 limitation).
set -uo pipefail
SYSFS=$1 ADDRESS=$2 IP=${3:-ip}

[[ -e $SYSFS/module/nvidia_peermem ]] && echo "nvidia_peermem is loaded (openibd cannot reload ib_uverbs under it)"

# a name is looked up as the node sees it
[[ $ADDRESS =~ ^[0-9.]+$ || $ADDRESS == *:* ]] || ADDRESS=$(getent ahostsv4 "$ADDRESS" 2>/dev/null | awk 'NR == 1 {print $1}')
dev=$("$IP" -o addr show 2>/dev/null | awk -v a="$ADDRESS" '{split($4, x, "/"); if (x[1] == a) {print $2; exit}}')
[[ -n $dev ]] || dev=$("$IP" -o route show default 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "dev") {print $(i + 1); exit}}')
if [[ -z $dev ]]; then
    echo "the interface carrying the connection to $ADDRESS is unknown"
    exit 0
fi

# the interface itself, or any interface under it (bond members, a VLAN's parent: lower_* links)
connectx() {
    local name=$1 lower driver
    driver=$(readlink -f "$SYSFS/class/net/$name/device/driver" 2>/dev/null) || driver=
    [[ ${driver##*/} == mlx5_core ]] && { echo "$name"; return; }
    for lower in "$SYSFS/class/net/$name"/lower_*; do
        [[ -e $lower ]] && connectx "${lower##*/lower_}"
    done
}
for port in $(connectx "$dev"); do
    echo "$dev carries the connection to $ADDRESS and rides on ConnectX port $port (openibd removes every mlx5 netdev)"
done
exit 0
