"""The cloud instance-type catalog as data files: every file loads, its figures are what the planners use, and a broken
file is named with its file, line and field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fabric.catalog.cloud import AWS_INSTANCE_TYPES, AZURE_VM_SIZES, GCP_MACHINE_TYPES
from fabric.catalog.cloud_model import CLOUD_DATA, load_aws, load_azure, load_gcp
from fabric.errors import InputError


def test_every_data_file_loads_and_is_what_the_catalog_serves() -> None:
    assert sorted(AWS_INSTANCE_TYPES) == sorted(p.stem for p in (CLOUD_DATA / "aws").glob("*.yaml"))
    assert sorted(GCP_MACHINE_TYPES) == sorted(p.stem for p in (CLOUD_DATA / "gcp").glob("*.yaml"))
    assert sorted(AZURE_VM_SIZES) == sorted(p.stem for p in (CLOUD_DATA / "azure").glob("*.yaml"))
    p5, b300 = AWS_INSTANCE_TYPES["p5.48xlarge"], AWS_INSTANCE_TYPES["p6-b300.48xlarge"]
    assert (p5.efa_interfaces, p5.efa_cards, p5.primary_card_efa) == (32, tuple(range(32)), True)
    assert (b300.efa_cards, b300.primary_card_efa) == (tuple(range(1, 17)), False)  # card 0 is ENA only
    mega, a4x = GCP_MACHINE_TYPES["a3-megagpu-8g"], GCP_MACHINE_TYPES["a4x-highgpu-4g"]
    assert (mega.gpu_vpcs, mega.mtu, mega.transport) == (8, 8244, "gpudirect-tcpxo")
    assert (a4x.rdma_nics, a4x.gvnic_vpcs, a4x.gpu_topology) == (4, 2, "1x72")
    nd = AZURE_VM_SIZES["Standard_ND96isr_H100_v5"]
    assert (nd.ib_ports, nd.ib_speed_gbps, nd.gen2_only) == (8, 400, True)


@pytest.mark.parametrize(
    ("provider", "replace", "where", "message"),
    [
        ("aws", ("efa_interfaces: 32", "efa_interfaces: 31"), (2, ""), "efa_cards lists 32 cards for 31 efa_interfaces"),
        ("aws", ("root_volume_gib: 512", "root_volume_gib: big"), (9, "root_volume_gib"), "Input should be a valid integer"),
        ("aws", ("capacity_block: true", "capacity_block: true\nspot_only: true"), (9, "spot_only"), "Extra inputs are not permitted"),
        ("gcp", ("transport: gpudirect-tcpxo", "transport: tcpxo"), (9, "transport"), "Input should be 'gpudirect-tcpx'"),
        ("gcp", ("rdma_nics: 0", "rdma_nics: 2"), (2, ""), "transport gpudirect-tcpxo does not match gpu_vpcs=8, rdma_nics=2"),
    ],
)
def test_a_broken_file_is_named_with_file_line_and_field(
    tmp_path: Path, provider: str, replace: tuple[str, str], where: tuple[int, str], message: str
) -> None:
    source = {"aws": "p5.48xlarge", "gcp": "a3-megagpu-8g"}[provider]
    directory = tmp_path / provider
    directory.mkdir()
    shutil.copy(CLOUD_DATA / provider / f"{source}.yaml", directory)
    file = directory / f"{source}.yaml"
    text = file.read_text(encoding="utf-8")
    assert replace[0] in text
    file.write_text(text.replace(replace[0], replace[1]), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        (load_aws if provider == "aws" else load_gcp)(directory)
    [finding] = caught.value.findings
    assert (finding.file, finding.line, finding.dotted_path) == (f"{directory}/{source}.yaml", *where)
    assert message in finding.message


def test_an_azure_size_with_ib_ports_but_no_speed_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "azure"
    directory.mkdir()
    (directory / "Standard_X.yaml").write_text("name: Standard_X\ngpus: 0\nib_ports: 2\nib_speed_gbps: 0\ngen2_only: false\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_azure(directory)
    assert "ib_speed_gbps is given (non-zero) exactly when ib_ports > 0" in caught.value.findings[0].message
