"""Catalogs of hardware facts, kept as data: node hardware, switch models and cloud instance types."""

from __future__ import annotations

from fabric.catalog.cloud import AWS_INSTANCE_TYPES, AZURE_VM_SIZES, GCP_MACHINE_TYPES, AwsInstanceType, AzureVmSize, GcpMachineType
from fabric.catalog.hardware import HARDWARE, HardwareProfile, PortGroup
from fabric.catalog.switches import SWITCH_MODELS, SwitchModel

__all__ = [
    "AWS_INSTANCE_TYPES",
    "AZURE_VM_SIZES",
    "GCP_MACHINE_TYPES",
    "HARDWARE",
    "SWITCH_MODELS",
    "AwsInstanceType",
    "AzureVmSize",
    "GcpMachineType",
    "HardwareProfile",
    "PortGroup",
    "SwitchModel",
]
