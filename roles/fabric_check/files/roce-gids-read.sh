# fabric_check: read the RoCE GID tables of RDMA devices from sysfs, one GID per line, for the filter gpufabric_roce_gids.
# Read-only. Run with bash by ansible.builtin.script.
#   roce-gids-read.sh SYSFS [HCA ...]       HCA '*' = every RDMA device sysfs has (a bond's GIDs may be on any of them)
# Lines:
#   <hca> <index> <gid> <netdev|-> <type>
# netdev is gid_attrs/ndevs/<index>, the net device the GID belongs to: for a bonded port the bond (RoCE LAG puts one
# device, mlx5_bond_<n>, on the bond; ports of two cards in one bond each list the bond's addresses with the bond as
# netdev); type is gid_attrs/types/<index> ("IB/RoCE v1" or "RoCE v2").
set -u
sysfs=$1
shift
devices=()
for hca in "$@"; do
  if [ "$hca" = "*" ]; then
    devices+=("$sysfs"/class/infiniband/*)
  else
    devices+=("$sysfs/class/infiniband/$hca")
  fi
done
for dev in "${devices[@]}"; do
  [ -d "$dev/ports" ] || continue
  name=${dev##*/}
  for port in "$dev"/ports/*; do
    [ -d "$port/gids" ] || continue
    for gid in "$port"/gids/*; do
      n=${gid##*/}
      value=$(cat "$gid" 2>/dev/null) || continue
      ndev=$(cat "$port/gid_attrs/ndevs/$n" 2>/dev/null) || ndev=-
      kind=$(cat "$port/gid_attrs/types/$n" 2>/dev/null) || kind=-
      echo "$name $n $value ${ndev:--} ${kind:--}"
    done
  done
done | sort -u
