#!/usr/bin/env bash
# Prepare, on this machine, what a real GPU node needs to run the node roles' check mode and read-only verifies
# (the node reaches no package registry): a wheelhouse of ansible-core and its dependencies for the node's Python, and
# a one-host inventory made from a bundled example's own inventory (the first GPU host, local connection).
#   ci/real-node/prepare.sh OUT [EXAMPLE] [PYVER]     e.g. ci/real-node/prepare.sh .real-node onprem-roce 3.12
# Then copy OUT, roles/, playbooks/, plugins/ and ansible.cfg to the node and run ci/real-node/run.sh there.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: prepare.sh OUT [EXAMPLE] [PYVER]}
example=${2:-onprem-roce}
pyver=${3:-3.12}
venv=.venv/bin
mkdir -p "$out/wheels"
# the versions CI runs (requirements.txt), as binary wheels for the node's interpreter
pins=$(grep -E '^(ansible-core|Jinja2|MarkupSafe|PyYAML|cryptography|cffi|pycparser|packaging|resolvelib)==' requirements.txt | awk '{print $1}')
# shellcheck disable=SC2086
"$venv/pip" download -q --only-binary=:all: --python-version "$pyver" --platform manylinux2014_x86_64 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --implementation cp -d "$out/wheels" $pins
"$venv/python" - "$example" "$out/inventory.yml" <<'PY'
import json, subprocess, sys, yaml
example, target = sys.argv[1], sys.argv[2]
listing = json.loads(subprocess.run([".venv/bin/ansible-inventory", "-i", f"inventories/{example}/cluster.yaml", "--list", "--export"],
                                    check=True, capture_output=True, text=True).stdout)
hostvars = listing["_meta"]["hostvars"]
gpu = sorted(listing.get("gpu_nodes", {}).get("hosts", []) or [h for h in hostvars if h.startswith("gpu")])[0]
groups = sorted(g for g, body in listing.items() if g != "_meta" and gpu in (body.get("hosts") or []))
# the host's variables as Ansible merges them (group variables included), then a local connection
merged = json.loads(subprocess.run([".venv/bin/ansible-inventory", "-i", f"inventories/{example}/cluster.yaml", "--host", gpu],
                                   check=True, capture_output=True, text=True).stdout)
host = dict(merged, ansible_connection="local", ansible_python_interpreter="/usr/bin/python3")
inventory = {"all": {"children": {g: {"hosts": {gpu: {}}} for g in groups}, "hosts": {gpu: host}}}
with open(target, "w", encoding="utf-8") as f:
    yaml.safe_dump(inventory, f, sort_keys=True)
print(f"{target}: {gpu} from inventories/{example}, groups {', '.join(groups)}")
PY
