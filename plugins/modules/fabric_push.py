#!/usr/bin/python
"""Ansible module ``gpufabric.fabric.fabric_push``: ``gpufabric push`` as a task (same transaction, same record)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: fabric_push
short_description: Push a gpufabric cluster's switch configs (canary per tier, batches, change record, lock)
version_added: 0.1.0
author: gpufabric maintainers
description:
  - Validates and plans the cluster definition, renders every switch's configuration and pushes it with the transaction
    of C(gpufabric push --commit) (the Python function behind it, not a shell-out) - one canary per tier, then batches;
    each device in a config session with a revert timer, post-checks and rollback; the fabric's lock held throughout;
    backups, applied configs and an audit line recorded under O(state_dir).
  - In check mode it is C(gpufabric push) without C(--commit) - each device's diff, the candidate discarded, nothing
    recorded - or, with O(offline=true), C(gpufabric diff --offline) - the candidate against the change record, without
    device access.
  - "Runs where the C(gpufabric) Python package is installed (the controller or the execution environment): a play on
    C(localhost), or C(delegate_to: localhost)."
  - Credentials come from module parameters (fed by an AWX credential, never a file of the playbook) or the
    definition's references (C(switches.credentials)). A parameter overrides the definition.
options:
  definition:
    description: The cluster definition (C(cluster.yaml)).
    type: path
    required: true
  state_dir:
    description:
      - The fabric's state directory - change record, backups, audit log and lock (C(gpufabric push --state)).
      - Must persist between runs (on AWX, a volume mounted into the execution environment).
      - When it holds a local twin (C(lab.json) from C(gpufabric lab up)), the twin's switches are the devices.
    type: path
    required: true
  username:
    description: Switch login; overrides C(switches.credentials.username). An AWX network credential sets C(ANSIBLE_NET_USERNAME).
    type: str
  ssh_key_file:
    description: Private key file for the switches. An AWX network credential writes its key to a file named by C(ANSIBLE_NET_SSH_KEYFILE).
    type: path
  ssh_key:
    description: The private key itself (for example from a custom AWX credential type); written to a private temporary file for the run.
    type: str
  known_hosts:
    description: Known-hosts file the switches' host keys must match; overrides C(switches.known_hosts). Unknown or changed keys are refused.
    type: path
  offline:
    description: In check mode, diff against the change record instead of the devices (no device access). Only valid in check mode.
    type: bool
    default: false
  parallel:
    description: Switches per batch after the canaries.
    type: int
    default: 4
  continue_on_failure:
    description: Keep rolling out after a failed device (default - stop, and report the remaining devices as skipped).
    type: bool
    default: false
  post_check_timeout:
    description: Seconds for BGP to recover after a device's commit before it is rolled back.
    type: float
    default: 30.0
  canaries:
    description:
      - Push only each plane's canary - the first OOB switch, each L2 plane's first switch and the compute fabric's
        first switch of each tier (C(gpufabric push --canaries)); each is verified by its own post-check and reverted
        if that fails. A later full push does the rest.
    type: bool
    default: false
  rollback_to:
    description:
      - Instead of the rendered configs, put every switch back to what it ran after this recorded change
        (C(gpufabric rollback --to)); the change ids are in the state directory's C(audit.jsonl).
    type: str
  planes:
    description:
      - The planes whose switches are pushed (C(gpufabric push --plane)), always in the order oob, storage, inband,
        compute - the OOB management switches one at a time first, the compute fabric last.
    type: list
    elements: str
    choices: [oob, storage, inband, compute]
    default: [oob, storage, inband, compute]
attributes:
  check_mode:
    description: Shows each device's diff and discards the candidate; nothing is committed or recorded.
    support: full
  diff_mode:
    description:
      - One diff per switch that differs, its running configuration against the candidate.
      - With O(offline=true), the recorded configuration against the candidate.
    support: full
requirements:
  - gpufabric (Python package) on the host that runs the module
notes:
  - C(changed) is true when any switch committed a change, or in check mode when any switch would.
  - The module fails when any device failed (rejected line, failed post-check, unreachable) or the fabric is locked;
    C(devices) then tells which, and which were rolled back.
"""

EXAMPLES = r"""
- name: Push the fabric (a canary per tier, then batches of 4)
  gpufabric.fabric.fabric_push:
    definition: "{{ playbook_dir }}/cluster.yaml"
    state_dir: /var/lib/gpufabric/onprem-roce
  delegate_to: localhost
  run_once: true

- name: What a push would change, from the change record (no device access)
  gpufabric.fabric.fabric_push:
    definition: cluster.yaml
    state_dir: /var/lib/gpufabric/onprem-roce
    offline: true
  check_mode: true
"""

RETURN = r"""
change:
  description: The change id (also the key of the record under O(state_dir)); C(offline) for an offline diff.
  returned: always
  type: str
  sample: 20261123T020000123456Z
devices:
  description: Per switch - whether it differs, committed, was rolled back, its error, and the commands its change consists of.
  returned: always
  type: dict
  sample: {"leaf01": {"changed": true, "committed": true, "rolled_back": false, "error": null, "diff": ["+ router bgp 65101"]}}
"""

import os
import tempfile
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

PLANES = ("oob", "storage", "inband", "compute")  # fabric.apply.planes.PLANES (the module imports gpufabric only when it runs)
ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "definition": {"type": "path", "required": True},
    "state_dir": {"type": "path", "required": True},
    "username": {"type": "str", "fallback": (env_fallback, ["ANSIBLE_NET_USERNAME"])},
    "ssh_key_file": {"type": "path", "no_log": False, "fallback": (env_fallback, ["ANSIBLE_NET_SSH_KEYFILE"])},
    "ssh_key": {"type": "str", "no_log": True},
    "known_hosts": {"type": "path"},
    "offline": {"type": "bool", "default": False},
    "parallel": {"type": "int", "default": 4},
    "continue_on_failure": {"type": "bool", "default": False},
    "post_check_timeout": {"type": "float", "default": 30.0},
    "planes": {"type": "list", "elements": "str", "choices": list(PLANES), "default": list(PLANES)},
    "canaries": {"type": "bool", "default": False},
    "rollback_to": {"type": "str"},
}
EXCLUSIVE = [("ssh_key", "ssh_key_file")]
MODES = ("offline", "canaries", "rollback_to")  # at most one set: the playbook passes every one, false or omitted


def _access(params: dict[str, Any], validated: Any, plan: Any, state: Path, key_file: str | None) -> dict[str, Any]:  # noqa: ANN401
    """Device access as the CLI resolves it (the twin's, else the definition's), with the module's overrides on top."""
    from fabric.apply.planes import parse_planes
    from fabric.twin.access import access_for

    access = access_for(validated, plan, state, parse_planes(params["planes"]))
    overrides: dict[str, Any] = {}
    if params["username"]:
        overrides["username"] = params["username"]
    if key_file:
        overrides["key_file"] = key_file
    if params["known_hosts"]:
        overrides["known_hosts"] = str(Path(params["known_hosts"]).resolve())
    return {name: replace(device, **overrides) for name, device in access.items()}


def _push(module: AnsibleModule, key_file: str | None) -> dict[str, Any]:
    """Run the push (or its check-mode dry run); returns the module result. Raises the fabric's errors."""
    from fabric.apply.planes import parse_planes
    from fabric.apply.push import candidates, offline_diff, push_and_record
    from fabric.apply.rollout import RolloutOptions
    from fabric.plan import plan_cluster
    from fabric.twin.access import adapters_for
    from fabric.validate import validate_file

    params = module.params
    modes = [name for name in MODES if params[name]]
    if len(modes) > 1:
        module.fail_json(msg=f"{' and '.join(modes)} exclude each other: set one of them")
    validated = validate_file(Path(params["definition"]))
    plan = plan_cluster(validated.spec)
    state = Path(params["state_dir"]).resolve()
    steps: list[str] = []
    planes = parse_planes(params["planes"])
    adapters = adapters_for(state)  # the twin pushes a SONiC switch's frr.conf through the FRR adapter
    if params["offline"]:
        change, results = "offline", offline_diff(plan, state, planes, adapters)
    else:
        options = RolloutOptions(
            commit=not module.check_mode,
            parallel=max(1, params["parallel"]),
            stop_on_failure=not params["continue_on_failure"],
            post_check_s=params["post_check_timeout"],
            planes=planes,
            canaries_only=params["canaries"],
            adapters=adapters,
        )
        access = _access(params, validated, plan, state, key_file)
        change, results = push_and_record(
            plan,
            Path(params["definition"]),
            state,
            access,
            options,
            progress=lambda device, step: steps.append(f"{device}: {step}"),
            record=not module.check_mode,
            rollback_to=params["rollback_to"],
        )
    wanted = candidates(plan, planes, adapters) if module._diff else {}  # AnsibleModule's diff-mode flag (no public accessor)
    return build_result(change, results, steps, check_mode=module.check_mode, diff_mode=module._diff, wanted=wanted)


def build_result(change: str, results: list[Any], steps: list[str], *, check_mode: bool, diff_mode: bool, wanted: dict[str, str]) -> dict[str, Any]:
    """The module result: per switch its flags, error and diff, the progress steps, the diff-mode entries and the
    failure message, every text masked through ``fabric.apply.shown`` (Ansible prints the result, AWX stores it)."""
    from fabric.apply.shown import shown_config_diffs, shown_result, shown_text

    devices = {r.device: shown_result(r) for r in results}
    changed = any(r.changed for r in results) if check_mode else any(r.committed for r in results)
    result: dict[str, Any] = {"changed": changed, "change": change, "devices": devices, "steps": [shown_text(step) for step in steps]}
    if diff_mode:
        result["diff"] = shown_config_diffs(results, wanted)
    failed = [f"{r.device}: {devices[r.device]['error']}" for r in results if r.error]
    if failed:
        result["msg"] = f"{len(failed)} switch(es) failed: " + "; ".join(failed)
    return result


def main() -> None:
    """Module entry point."""
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, mutually_exclusive=EXCLUSIVE)
    try:
        from fabric.errors import FabricError, InputError
    except ImportError:
        module.fail_json(msg=missing_required_lib("gpufabric"), exception=traceback.format_exc())
    if module.params["offline"] and not module.check_mode:
        module.fail_json(msg="offline: true only diffs against the change record; run the task in check mode (--check or check_mode: true)")
    with tempfile.TemporaryDirectory(prefix="gpufabric-key-") as private:
        key_file = module.params["ssh_key_file"]
        if module.params["ssh_key"]:
            key_file = os.path.join(private, "id")
            with open(key_file, "w", encoding="utf-8", opener=lambda path, flags: os.open(path, flags, 0o600)) as handle:
                handle.write(module.params["ssh_key"].strip() + "\n")
        try:
            result = _push(module, key_file)
        except InputError as exc:
            findings = " | ".join(str(f) for f in exc.findings)
            module.fail_json(msg=f"{module.params['definition']}: invalid, {len(exc.errors)} error(s): {findings}")
        except FabricError as exc:
            from fabric.apply.shown import shown_text

            module.fail_json(msg=f"push refused: {shown_text(str(exc))}")
    if "msg" in result:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
