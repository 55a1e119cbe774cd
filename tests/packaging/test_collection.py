"""The Ansible collection gpufabric.fabric: assembled, built with ansible-galaxy, installed, and run from the install.

Ansible runs in the venv that holds only the wheel (tests/packaging/conftest.py), from a directory outside the
checkout, with the ansible.cfg docs/collection.md gives: the collection and the package are all it has.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest
import yaml

from fabric.apply.planes import PLANES
from fabric.apply.push import candidates
from fabric.apply.record import record_device
from fabric.apply.transaction import PushResult
from fabric.plan import plan_cluster
from fabric.validate import validate_file
from tests.conftest import ROOT
from tests.packaging.conftest import Installed, run_checked
from tests.roles.scenario import ansible

pytestmark = pytest.mark.slow

ROLES = ("fabric_check", "gpu_driver", "network_planes", "nic_qos", "opensm", "rdma_stack")
SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key-but-a-secret\n-----END OPENSSH PRIVATE KEY-----"


def test_tarball_holds_roles_plugins_playbooks_and_metadata(installed: Installed) -> None:
    with tarfile.open(installed.tarball) as tar:
        names = set(tar.getnames())
        manifest = json.loads(tar.extractfile("MANIFEST.json").read())  # type: ignore[union-attr]
        runtime = yaml.safe_load(tar.extractfile("meta/runtime.yml").read())  # type: ignore[union-attr]
        fabric_check = tar.extractfile("roles/fabric_check/vars/main.yml").read().decode()  # type: ignore[union-attr]
    info = manifest["collection_info"]
    assert (info["namespace"], info["name"]) == ("gpufabric", "fabric")
    assert info["version"] == tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert runtime["requires_ansible"].startswith(">=2.19")
    for role in ROLES:
        assert {f"roles/{role}/tasks/main.yml", f"roles/{role}/meta/main.yml", f"roles/{role}/meta/argument_specs.yml"} <= names
    assert {"plugins/inventory/gpufabric.py", "plugins/filter/gpufabric_checks.py", "plugins/modules/fabric_push.py"} <= names
    assert {"playbooks/site.yml", "playbooks/check.yml", "playbooks/fabric_push.yml"} <= names
    assert not [n for n in names if "molecule" in n or "__pycache__" in n]
    assert "| gpufabric.fabric.gpufabric_failed_pings" in fabric_check
    assert not re.search(r"\|\s*gpufabric_", fabric_check), "a collection's filters resolve only by their full name"


def test_role_metadata_names_platform_and_minimum_ansible_core() -> None:
    for role in ROLES:
        meta = yaml.safe_load((ROOT / "roles" / role / "meta" / "main.yml").read_text(encoding="utf-8"))["galaxy_info"]
        assert meta["role_name"] == role
        assert meta["min_ansible_version"] == "2.19"
        # Every role runs on Debian 12; roles with per-OS data list more (tests/roles/test_static.py ties those lists to
        # each role's preflight). Galaxy's platform names: Debian/Ubuntu by codename, EL by major release.
        assert meta["platforms"][0] == {"name": "Debian", "versions": ["bookworm"]}
        assert {p["name"] for p in meta["platforms"]} <= {"Debian", "Ubuntu", "EL"}


def plays(listing: str) -> list[tuple[str, list[str]]]:
    """``--list-hosts`` output → (play line, its hosts sorted) per play (Ansible prints hosts in no fixed order)."""
    out: list[tuple[str, list[str]]] = []
    for line in listing.splitlines():
        if line.strip().startswith("play #"):
            out.append((line.strip(), []))
        elif line.startswith("      ") and line.strip() and out:
            out[-1][1].append(line.strip())
    return [(play, sorted(hosts)) for play, hosts in out]


def test_site_playbook_from_the_installed_collection(installed: Installed) -> None:
    site = "onprem-ib"  # SM hosts and partitions: every play selects hosts
    syntax = installed.ansible("playbook", "gpufabric.fabric.site", "gpufabric.fabric.check", "-i", f"{site}/cluster.yaml", "--syntax-check")
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr
    hosts = installed.ansible("playbook", "gpufabric.fabric.site", "-i", f"{site}/cluster.yaml", "--list-hosts")
    assert hosts.returncode == 0, hosts.stdout + hosts.stderr
    reference = ansible("ansible-playbook", "playbooks/site.yml", "-i", f"inventories/{site}/cluster.yaml", "--list-hosts")
    assert reference.returncode == 0, reference.stderr
    listing = plays(hosts.stdout)
    assert listing == plays(reference.stdout), "the installed collection selects other hosts than the checkout"
    assert len(listing) == 4
    assert listing[3][0].startswith("play #4 (gpu_nodes:storage_nodes:sm_nodes:mgmt_nodes:login_nodes): Network planes and fabric checks")
    assert all(hosts for _, hosts in listing)


def test_the_installed_plugins_interfaces_template_resolves_to_the_planned_ports(installed: Installed) -> None:
    """``gpufabric_interfaces`` is a template over the group's layout and the host's addresses (ansible-core's own
    filters only), so it resolves the same from the installed collection as from the checkout (the compact form is
    forced: the example is below the size that picks it)."""
    query = "msg={{ (gpufabric_interfaces | map(attribute='address') | select | list | length) ~ '/' ~ gpufabric_interfaces[0].name }}"
    argv = ("gpu001", "-i", "onprem-roce/cluster.yaml", "-m", "ansible.builtin.debug", "-a", query)
    done = installed.ansible("adhoc", *argv, env={"GPUFABRIC_INVENTORY_COMPACT": "always"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"msg": "10/enp24s0np0"' in done.stdout, done.stdout


def test_filters_resolve_by_their_collection_name(installed: Installed) -> None:
    done = installed.ansible("adhoc", "localhost", "-m", "ansible.builtin.debug", "-a", "msg={{ [] | gpufabric.fabric.gpufabric_failed_pings }}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"msg": []' in done.stdout


def test_module_documentation_is_readable(installed: Installed) -> None:
    done = installed.ansible("doc", "gpufabric.fabric.fabric_push")
    assert done.returncode == 0, done.stderr
    assert "check_mode" in done.stdout
    assert "state_dir" in done.stdout


def test_fabric_push_arguments_and_offline_diff(installed: Installed, tmp_path: Path) -> None:
    """Argument handling and the check-mode diff against the change record, all without a device."""
    work = installed.venv.work
    state = tmp_path / "state"
    definition = work / "lab" / "cluster.yaml"
    plan = plan_cluster(validate_file(definition).spec)
    wanted = candidates(plan, PLANES)  # the module pushes every plane by default, like the CLI
    bad = work / "bad" / "cluster.yaml"
    bad.parent.mkdir(exist_ok=True)
    bad.write_text(definition.read_text(encoding="utf-8").replace("mtu: 9000", "mtu: 90000", 1), encoding="utf-8")

    def task(name: str, check: bool, **args: object) -> dict[str, object]:
        return {
            "name": name,
            "gpufabric.fabric.fabric_push": {"definition": str(definition), "state_dir": str(state), **args},
            "check_mode": check,
            "diff": True,
            "ignore_errors": True,
            "vars": {"ansible_python_interpreter": "{{ ansible_playbook_python }}"},
        }

    def run(tasks: list[dict[str, object]]) -> dict[str, dict[str, object]]:
        """Run the tasks on localhost; returns each one's registered result by task name."""
        playbook, report = tmp_path / "push.yml", tmp_path / "results.json"
        names = [str(t["name"]) for t in tasks]
        registered = [{**t, "register": f"result_{i}"} for i, t in enumerate(tasks)]
        collect = "{{ {" + ", ".join(f"{n!r}: result_{i}" for i, n in enumerate(names)) + "} | to_json }}"
        save = {"name": "save", "ansible.builtin.copy": {"content": collect, "dest": str(report), "mode": "0600"}}
        playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [*registered, save]}]), encoding="utf-8")
        done = installed.ansible("playbook", str(playbook), "-i", "localhost,", "-c", "local", "--diff", "-v")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert SECRET.splitlines()[1] not in done.stdout + done.stderr, "the key given as ssh_key must never be shown"
        results = json.loads(report.read_text(encoding="utf-8"))
        assert SECRET.splitlines()[1] not in json.dumps(results)
        return results

    results = run(
        [
            task("offline needs check mode", check=False, offline=True),
            {**task("no state directory", check=True), "gpufabric.fabric.fabric_push": {"definition": str(definition)}},
            task("key and key file", check=True, offline=True, ssh_key=SECRET, ssh_key_file="/nonexistent"),
            {
                **task("invalid definition", check=True, offline=True),
                "gpufabric.fabric.fabric_push": {"definition": str(bad), "state_dir": str(state)},
            },
            task("nothing recorded yet", check=True, offline=True, ssh_key=SECRET),
        ]
    )
    assert results["offline needs check mode"]["failed"]
    assert "check mode" in str(results["offline needs check mode"]["msg"])
    assert "missing required arguments: state_dir" in str(results["no state directory"]["msg"])
    assert "mutually exclusive: ssh_key|ssh_key_file" in str(results["key and key file"]["msg"])
    assert "invalid" in str(results["invalid definition"]["msg"])
    assert "90000" in str(results["invalid definition"]["msg"])
    fresh = results["nothing recorded yet"]
    assert not fresh.get("failed"), fresh
    assert fresh["changed"]
    assert fresh["change"] == "offline"
    devices = fresh["devices"]
    assert isinstance(devices, dict)
    assert sorted(devices) == sorted(wanted)
    assert all(d["changed"] and not d["committed"] for d in devices.values())
    diffs = fresh["diff"]
    assert isinstance(diffs, list)
    assert [d["before_header"] for d in diffs] == [f"{name} (running)" for name in devices]
    spine = diffs[[d["before_header"] for d in diffs].index("spine01 (running)")]
    assert spine["before"] == ""
    assert spine["after"] == wanted["spine01"]
    assert not state.exists() or not list(state.rglob("*.applied")), "check mode records nothing"

    # The record says every switch but leaf02 runs its candidate: only leaf02 differs; then none does.
    for name, config in sorted(wanted.items()):
        if name != "leaf02":
            record_device(state, "20260101T000000000000Z", PushResult(name, changed=True, diff=[], committed=True), config)
    partial = run([task("one switch behind", check=True, offline=True)])["one switch behind"]
    assert partial["changed"]
    assert {name for name, d in partial["devices"].items() if d["changed"]} == {"leaf02"}  # type: ignore[union-attr]
    record_device(state, "20260102T000000000000Z", PushResult("leaf02", changed=True, diff=[], committed=True), wanted["leaf02"])
    synced = run([task("in sync", check=True, offline=True)])["in sync"]
    assert not synced["changed"]
    assert "diff" not in synced or synced["diff"] == []


def test_ansible_test_sanity_offline(installed: Installed) -> None:
    """Every sanity test that needs nothing from the network, on the installed Python.

    The others (ansible-doc, import, pep8, pylint, validate-modules, yamllint, runtime-metadata, changelog, …) each run in
    a venv that ansible-test bootstraps with a pip script from ci-files.testing.ansible.com and fills from PyPI; pslint
    and shellcheck need pwsh and shellcheck. ansible-doc is covered above from the installed collection.
    """
    import ansible_test

    requirements = Path(ansible_test.__file__).parent / "_data" / "requirements"
    test = [
        str(Path(sys.executable).parent / "ansible-test"),
        "sanity",
        "--python",
        f"{sys.version_info.major}.{sys.version_info.minor}",
        "--color",
        "no",
    ]
    listed = run_checked([*test, "--list-tests"], cwd=installed.tree).stdout.split()
    offline = [t for t in listed if not (requirements / f"sanity.{t}.txt").exists() and t not in {"pslint", "shellcheck"}]
    assert {"compile", "no-assert", "shebang", "action-plugin-docs", "use-argspec-type-path"} <= set(offline)
    done = subprocess.run([*test, *(f"--test={t}" for t in offline)], cwd=installed.tree, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_awx_shaped_project_imports_the_push_playbook(installed: Installed, tmp_path: Path) -> None:
    """As an AWX job runs it: a project playbook importing the collection's, the inventory not the definition, the
    definition given relative to the project, check mode offline; and the fix-it message when the state is not given."""
    project = installed.venv.work
    (project / "push.yml").write_text("- ansible.builtin.import_playbook: gpufabric.fabric.fabric_push\n", encoding="utf-8")
    state = tmp_path / "state"
    common = ("push.yml", "-i", "localhost,", "-c", "local", "-e", "gpufabric_definition=lab/cluster.yaml")
    missing = installed.ansible("playbook", *common)
    assert missing.returncode != 0
    assert "set gpufabric_definition" in missing.stdout
    assert "gpufabric_state_dir" in missing.stdout
    review = installed.ansible("playbook", *common, "-e", f"gpufabric_state_dir={state}", "-e", "gpufabric_push_offline=true", "--check", "--diff")
    assert review.returncode == 0, review.stdout[-3000:] + review.stderr[-3000:]
    assert "+++ after: leaf01 (candidate)" in review.stdout
    assert re.search(r"localhost\s*:\s*ok=2\s+changed=1\s+unreachable=0\s+failed=0", review.stdout), review.stdout[-1500:]


def test_awx_job_templates_feed_the_push_playbook() -> None:
    """The job-template definition names variables the collection's playbook reads, and a push.yml of the project."""
    definition = yaml.safe_load((ROOT / "collection" / "awx" / "job-templates.yml").read_text(encoding="utf-8"))
    playbook = (ROOT / "collection" / "playbooks" / "fabric_push.yml").read_text(encoding="utf-8")
    tasks = definition[0]["tasks"]
    templates = {t["awx.awx.job_template"]["name"].split("-")[-1]: t["awx.awx.job_template"] for t in tasks if "awx.awx.job_template" in t}
    assert {name: t["job_type"] for name, t in templates.items()} == {"diff": "check", "push": "run", "canary": "run", "rollback": "run"}
    for template in templates.values():
        assert template["playbook"] == "push.yml"
        assert template["diff_mode"] is True
        asked = [q["variable"] for q in template.get("survey_spec", {}).get("spec", [])]
        for key in [*template["extra_vars"], *asked]:
            assert key in playbook, f"{key} is not read by playbooks/fabric_push.yml"
    assert templates["canary"]["extra_vars"]["gpufabric_push_canaries"] is True
    assert [q["variable"] for q in templates["rollback"]["survey_spec"]["spec"]] == ["gpufabric_rollback_to"]
    # The workflow: review → approval → canary → push, nothing before the approval touches a switch.
    nodes = next(t for t in tasks if "awx.awx.workflow_job_template_node" in t)["loop"]
    follows = {n["identifier"]: n.get("next", []) for n in nodes}
    assert follows == {"review": ["approve"], "approve": ["canary"], "canary": ["push"], "push": []}
    by_id = {n["identifier"]: n for n in nodes}
    assert "approval" in by_id["approve"]
    assert by_id["review"]["template"].endswith("-diff")
    assert templates["diff"]["job_type"] == "check", "the review commits nothing"


def test_ansible_lint_production_on_the_installed_collection(installed: Installed) -> None:
    """The collection as users get it (FQCN filters, the push playbook) is clean for ansible-lint's production profile.

    galaxy.yml is left out: its publication rules want a license and a repository URL the project has not chosen.
    """
    root = installed.collections / "ansible_collections" / "gpufabric" / "fabric"
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(installed.collections), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    lint = [str(bin_dir / "ansible-lint"), "--nocolor", "--offline", "--profile", "production", "playbooks", "roles", "plugins"]
    done = subprocess.run(lint, cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
