"""Issue 31's done-when, machine-checked: every item the 2026-11 cloud audit (shared/reference/audit-2026-11/cloud-audit.md)
marks wrong, missing or still missing names the tests that cover it, and where the provider's words sit next to the code.

``COVERAGE`` is the table the report cites. The checks below fail when a named test or negative file disappears or is
renamed, when a quote is no longer next to the code, and (where the audit is beside the checkout, as in CI) when the
audit lists an item the table does not."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.conftest import ROOT


class Covered(NamedTuple):
    verdict: str  # the audit's
    what: str
    tests: tuple[str, ...]  # "path::test_function" or a negative file under tests/data/invalid (its header is the case)
    quote: tuple[str, str]  # (file, words of the provider's quote that must stand there)


COVERAGE: dict[str, Covered] = {
    # --- old items still missing (audit section 1) ---
    "§4 Lustre client": Covered(
        "still missing",
        "AWS FSx for Lustre client install + mount on every node",
        (
            "tests/cloud/test_shared_fs.py::test_the_stack_exports_the_file_system_it_created_as_one_cluster_variable",
            "tests/roles/test_shared_fs_plans.py::test_each_provider_plans_its_client_source_options_and_fstab",
            "tests/roles/test_shared_fs_plans.py::test_a_client_the_os_has_none_of_or_a_partial_variable_is_refused_with_the_reason",
            "tests/roles/test_shared_fs_plans.py::test_fsx_on_a_rhel_kernel_aws_builds_no_client_for_is_refused_naming_the_kernels",
            "tests/roles/test_shared_fs_mount.py::test_the_file_system_is_mounted_persisted_and_read_back_and_a_lost_option_fails_named",
        ),
        ("roles/cloud_fabric/defaults/main.yml", "sudo mount -t lustre -o relatime,flock"),
    ),
    "§4 CB lifecycle": Covered(
        "still missing",
        "AWS Capacity Block end: state drift documented and handled",
        (
            "tests/cloud/test_aws.py::test_the_capacity_block_is_read_from_aws_before_anything_launches_on_it",
            "tests/cloud/test_aws.py::test_an_ended_capacity_block_stops_the_program_naming_it_and_the_fix",
            "tests/cloud/test_aws.py::test_a_live_or_coming_capacity_block_builds",
        ),
        ("fabric/cloud/aws_block.py", "When a Capacity Block expires, all instances in the Capacity Block are terminated."),
    ),
    "§4 Lustre/Filestore client + mount": Covered(
        "still missing",
        "GCP Managed Lustre / Filestore client install + mount",
        (
            "tests/cloud/test_shared_fs.py::test_the_stack_exports_the_file_system_it_created_as_one_cluster_variable",
            "tests/roles/test_shared_fs_plans.py::test_each_provider_plans_its_client_source_options_and_fstab",
            "tests/roles/test_shared_fs_mount.py::test_filestore_plans_the_nfs_client_and_fstab_line_in_check_mode",
        ),
        ("roles/cloud_fabric/defaults/main.yml", "The client modules currently only"),
    ),
    "§4 IAP/OS Login IAM": Covered(
        "still missing",
        "GCP IAM grants for IAP tunnelling and OS Login",
        ("tests/cloud/test_gcp.py::test_service_account_enables_the_iam_api_and_operators_get_iap_and_os_login",),
        ("fabric/plan/cloud/gcp.py", "roles/iap.tunnelResourceAccessor: IAP TCP forwarding"),
    ),
    "§4 AMLFS client + mount": Covered(
        "still missing",
        "Azure Managed Lustre client install + mount",
        (
            "tests/cloud/test_shared_fs.py::test_azure_exports_the_amlfs_mgs_address_and_lustre_version_to_every_host",
            "tests/roles/test_shared_fs_plans.py::test_each_provider_plans_its_client_source_options_and_fstab",
            "tests/roles/test_shared_fs_plans.py::test_microsofts_key_is_trusted_only_with_its_pinned_fingerprint",
        ),
        ("roles/cloud_fabric/defaults/main.yml", "client-install-plan support matrix"),
    ),
    "§4 managed identity / boot diagnostics / NHC": Covered(
        "still missing",
        "Azure VMSS identity, boot diagnostics, node health checks",
        (
            "tests/cloud/test_azure.py::test_scale_sets_get_boot_diagnostics_and_a_system_assigned_identity_with_opt_outs",
            "tests/roles/test_azure_nhc.py::test_azure_nd_node_runs_the_images_health_checks_and_fails_named_on_a_failed_check",
        ),
        ("roles/cloud_fabric/defaults/main.yml", "health check scripts built into the official AzureHPC images"),
    ),
    # --- new items, wrong ---
    "N-G13": Covered(
        "wrong",
        "A4X on a reservation gets its compact 1x72 policy",
        (
            "tests/cloud/test_gcp.py::test_a4x_on_a_reservation_is_reservation_bound_and_keeps_its_1x72_slice_policy",
            "tests/cloud/test_gb200.py::test_gcp_a4x_groups_are_reservation_bound_1x72_slices_and_slurm_blocks",
            "tests/data/invalid/gcp-a4x-without-placement.yaml",
            "tests/data/invalid/gcp-a4x-specific-reservation.yaml",
        ),
        ("fabric/model/rules/gcp.py", "you must apply a compact placement policy or a workload policy"),
    ),
    "N-G17": Covered(
        "wrong",
        "DWS flex-start refused for A4X",
        ("tests/data/invalid/gcp-a4x-flex-start.yaml",),
        ("fabric/model/rules/gcp.py", "(except A4X and G4)"),
    ),
    "N-G23": Covered(
        "wrong",
        "Managed Lustre maxima per tier at GCP's system limits",
        ("tests/data/invalid/gcp-lustre-above-tier-maximum.yaml",),
        ("fabric/model/rules/gcp.py", "125 MBps per TiB: 7,632,000 GiB"),
    ),
    # --- new items, missing ---
    "N-A12": Covered(
        "missing",
        "ASG hostnames survive instance replacement",
        (
            "tests/cloud/test_aws.py::test_a_replaced_instance_keeps_its_hosts_name_and_moves_no_other_name",
            "tests/cloud/test_aws.py::test_auto_scaling_group_puts_every_interface_in_its_planned_subnet",
        ),
        ("fabric/cloud/aws_asg.py", "gpufabric-host"),
    ),
    "N-A13": Covered(
        "missing",
        "ASG + customer managed KMS key: grant for the Auto Scaling service-linked role",
        (
            "tests/cloud/test_aws.py::test_auto_scaling_with_a_customer_key_grants_the_service_linked_role",
            "tests/data/invalid/aws-asg-kms-alias.yaml",
        ),
        ("fabric/cloud/aws_asg.py", "they do not include access to your"),
    ),
    "N-G2": Covered(
        "missing",
        "iam.googleapis.com enabled with the service account",
        (
            "tests/cloud/test_gcp.py::test_service_account_enables_the_iam_api_and_operators_get_iap_and_os_login",
            "tests/cloud/test_gcp.py::test_no_service_account_no_iam_api",
        ),
        ("fabric/plan/cloud/gcp.py", "requirements: services: - iam.googleapis.com"),
    ),
    "N-G12": Covered(
        "missing",
        "A3 Ultra / A4 / A4X reservations default to RESERVATION_BOUND",
        (
            "tests/cloud/test_gcp.py::test_a3_ultra_reservation_without_a_mode_is_reservation_bound",
            "tests/cloud/test_gcp.py::test_a3_mega_reservation_without_a_mode_stays_standard",
        ),
        ("fabric/model/cloud.py", "if you have a reservation, keep RESERVATION_BOUND"),
    ),
    "N-G21": Covered(
        "missing",
        "image CPU architecture checked against the machine's",
        (
            "tests/data/invalid/gcp-a4x-amd64-image.yaml",
            "tests/cloud/test_gb200.py::test_azure_gb200_refuses_an_x86_image_and_warns_on_an_unmarked_one",
        ),
        ("fabric/catalog/data/cloud/gcp/a4x-highgpu-4g.yaml", "arm64"),
    ),
    "N-C1": Covered(
        "missing",
        "p6e-gb200.36xlarge (UltraServer) in the catalog",
        (
            "tests/cloud/test_gb200.py::test_aws_p6e_gb200_launch_template_has_ena_primary_and_efa_only_cards_and_one_block",
            "tests/cloud/test_gb200.py::test_aws_p6e_gb200_outside_a_reservation_is_refused",
            "tests/cloud/test_gb200.py::test_aws_p6e_gb200_more_than_one_ultraserver_or_a_split_one_is_refused",
            "tests/cloud/test_gb200.py::test_gb200_example_builds_every_planned_resource_and_passes_the_sdk_contract",
        ),
        ("fabric/model/rules/aws.py", "you can purchase the following UltraServer types through Capacity Blocks: P6e-GB200"),
    ),
    "N-C2": Covered(
        "missing",
        "a4x-maxgpu-4g-metal (A4X Max): refused by name with the reason (IPv6-only RDMA subnets)",
        (
            "tests/cloud/test_gb200.py::test_gb300_class_types_are_refused_with_their_reason_not_as_unknown",
            "tests/cloud/test_gb200.py::test_refused_types_are_not_in_the_catalog",
        ),
        ("fabric/catalog/cloud_refused.py", "a4xmax-bm-slurm-blueprint.yaml"),
    ),
    "N-C3": Covered(
        "missing",
        "ND GB200 v6 in the catalog; ND GB300 v6 refused by name with the reason",
        (
            "tests/cloud/test_gb200.py::test_azure_gb200_is_one_infiniband_group_of_arm_vms_and_no_block_is_guessed",
            "tests/cloud/test_gb200.py::test_gb300_class_types_are_refused_with_their_reason_not_as_unknown",
            "tests/cloud/test_gb200.py::test_gb200_example_builds_every_planned_resource_and_passes_the_sdk_contract",
        ),
        ("fabric/catalog/cloud_refused.py", "Standard_ND128isr_GB300_v6"),
    ),
    # --- high-risk unverifiable the audit asks to check (section 3) ---
    "N-Z5": Covered(
        "unverifiable (high risk)",
        "AMLFS servers reach the clients through the deny-all inband NSG",
        ("tests/cloud/test_azure.py::test_lustre_servers_reach_the_clients_through_the_deny_all_inband_nsg",),
        ("fabric/plan/cloud/azure.py", "lustre-from-storage"),
    ),
}

# The audit's own verdict cells for the items that must be covered.
FLAGGED = re.compile(r"\*\*(wrong|missing|still missing)\*\*")
AUDIT = ROOT.parent / "shared" / "reference" / "audit-2026-11" / "cloud-audit.md"


def _defined(path: Path) -> set[str]:
    return {n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("item", sorted(COVERAGE))
def test_every_audit_item_names_tests_that_exist(item: str) -> None:
    covered = COVERAGE[item]
    assert covered.tests, f"{item}: no test"
    for ref in covered.tests:
        path, _, name = ref.partition("::")
        assert (ROOT / path).is_file(), f"{item}: {path} does not exist"
        if name:
            assert name in _defined(ROOT / path), f"{item}: {path} defines no {name}"
        else:
            assert "# expected_error:" in (ROOT / path).read_text(encoding="utf-8"), f"{item}: {path} is no negative case"


@pytest.mark.parametrize("item", sorted(COVERAGE))
def test_every_audit_item_keeps_the_providers_words_next_to_the_code(item: str) -> None:
    where, words = COVERAGE[item].quote
    text = " ".join((ROOT / where).read_text(encoding="utf-8").split())
    assert " ".join(words.split()) in text, f"{item}: {where} no longer carries {words!r}"


def flagged_items(audit: str) -> set[str]:
    """Item ids of the audit's table rows whose verdict is wrong, missing or still missing."""
    found = set()
    for line in audit.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) > 2 and any(FLAGGED.search(c) for c in cells[1:]):
            found.add(cells[0])
    return found


def test_the_audit_parser_finds_flagged_rows_and_skips_the_rest() -> None:
    sample = "| N-X1 | arg | ref | **missing** (rule) |\n| N-X2 | arg | ref | ok |\n| §4 y | missing | **still missing** | z |\n"
    assert flagged_items(sample) == {"N-X1", "§4 y"}


@pytest.mark.skipif(not AUDIT.is_file(), reason="the audit lives in shared/ beside the checkout (there in CI and the worktrees)")
def test_the_table_lists_every_item_the_audit_flags() -> None:
    flagged = flagged_items(AUDIT.read_text(encoding="utf-8"))
    assert len(flagged) == 17, sorted(flagged)  # old: 6 still missing; new: 3 wrong + 8 missing
    assert flagged <= set(COVERAGE), f"not in the table: {sorted(flagged - set(COVERAGE))}"
