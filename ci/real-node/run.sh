#!/usr/bin/env bash
# On a real GPU node, as root, from a copy of the repository with prepare.sh's OUT beside it:
#   ci/real-node/run.sh OUT RESULTS
# Runs site.yml in check mode (the preview a user runs first), then each role's read-only verify tag on its own, and
# keeps what each printed under RESULTS. fabric_check's ping and bandwidth tasks never run: their targets are the
# definition's addresses, not machines you own. RUN_EXTRA (e.g. "-e gpufabric_gpus=1", where the example's node has more
# GPUs than this one) is added to every run. A --check run may install python3-apt/python3-dnf, which check mode needs
# (playbooks/tasks/check_mode_bindings.yml); nothing else changes the node.
set -uo pipefail
out=$(realpath "${1:?usage: run.sh OUT RESULTS}")
results=$(realpath -m "${2:?usage: run.sh OUT RESULTS}")
cd "$(dirname "$0")/../.."
mkdir -p "$results" "$out/site"
[[ -e $out/site/ansible ]] || for wheel in "$out"/wheels/*.whl; do python3 -m zipfile -e "$wheel" "$out/site"; done
export PYTHONPATH=$out/site ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_FORCE_COLOR=0 ANSIBLE_NOCOLOR=1
playbook() { python3 -c 'import sys; from ansible.cli.playbook import main; sys.argv[0] = "ansible-playbook"; main()' "$@"; }
{
  echo "\$ cat /etc/os-release"; cat /etc/os-release
  echo "\$ uname -r"; uname -r
  echo "\$ python3 --version"; python3 --version
  echo "\$ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv"; nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv
  echo "\$ head -1 /proc/driver/nvidia/version"; head -1 /proc/driver/nvidia/version
  echo "\$ dpkg-query -W python3-apt pciutils"; dpkg-query -W python3-apt pciutils 2>&1
} > "$results/node.txt" 2>&1
run() {  # name, then ansible-playbook arguments
  local name=$1; shift
  { echo "\$ ansible-playbook -i inventory playbooks/site.yml -e ansible_become=false ${RUN_EXTRA:-} $*"; timeout 300 bash -c "$(declare -f playbook); playbook -i '$out/inventory.yml' playbooks/site.yml -e ansible_become=false ${RUN_EXTRA:-} $*"; echo "rc=$?"; } > "$results/$name.txt" 2>&1
  echo "$name: $(tail -1 "$results/$name.txt")"
}
run site-check --check --diff
for tag in gpu_driver_verify host_tuning_verify rdma_stack_verify nccl_env_verify nic_firmware_verify; do
  run "verify-$tag" --tags "$tag"
done
run verify-gpu_driver-branch-570 --tags gpu_driver_verify -e gpu_driver_branch=570   # must fail, naming both branches
