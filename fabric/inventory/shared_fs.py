"""What a cloud node needs to mount the cluster's shared file system: the ``gpufabric_shared_fs`` variable. Pure.

The stack reads the file system's addresses back from the provider (they exist only after ``pulumi up``) and passes
them here; ``roles/cloud_fabric`` (tasks/shared_fs.yml) installs the client, mounts, persists and reads the mount back.
Per kind, the source a client mounts:

* ``fsx-lustre``: ``<DNS name>@tcp:/<mount name>`` (FSx for Lustre guide, mounting-ec2-instance: "sudo mount -t lustre
  -o relatime,flock file_system_dns_name@tcp:/mountname /fsx"); Lustre 2.15 is the ``file_system_type_version`` the
  stack sets (fabric/cloud/aws_efa.py).
* ``managed-lustre``: the instance's ``mount_point`` output, "``IP_ADDRESS@tcp:/FILESYSTEM``" (pulumi-gcp
  ``lustre.Instance.mount_point``); the stack names the file system ``lustrefs``.
* ``amlfs``: ``<MGS address>@tcp:/lustrefs`` (Azure ``AmlFilesystemClientInfo.mgsAddress``: "The IPv4 address used by
  clients to mount the AML file system's Lustre Management Service (MGS)"; ``lustreVersion``: the Lustre version the
  file system runs).
* ``filestore``: ``<IP>:/<share>`` over NFSv3 (the instance's ``networks[0].ip_addresses[0]`` and its one file share).
"""

from __future__ import annotations

from typing import Literal

SharedFsKind = Literal["fsx-lustre", "managed-lustre", "amlfs", "filestore"]

MOUNT_POINTS: dict[str, str] = {"fsx-lustre": "/fsx", "managed-lustre": "/lustre", "amlfs": "/lustre", "filestore": "/shared"}
"""Where each kind is mounted: AWS's guide mounts FSx at ``/fsx``; the others are this project's choice."""


def shared_fs(kind: str, server: str, name: str, lustre_version: str | None = None) -> dict[str, str]:
    """The one inventory variable a node mounts from: kind, client type, server, name, source, mount point (and the
    Lustre version where the provider reports or the stack sets one).

    Example:
        >>> shared_fs("fsx-lustre", "fs-0abc.fsx.us-east-1.amazonaws.com", "x7bb3bev", "2.15")["source"]
        'fs-0abc.fsx.us-east-1.amazonaws.com@tcp:/x7bb3bev'
        >>> shared_fs("filestore", "10.137.40.2", "shared")["source"], shared_fs("filestore", "10.137.40.2", "shared")["type"]
        ('10.137.40.2:/shared', 'nfs')
    """
    if kind not in MOUNT_POINTS:
        raise ValueError(f"shared file system kind {kind!r} is none of {', '.join(MOUNT_POINTS)}")
    if not server or not name:
        raise ValueError(f"{kind}: the provider reported no server address or file system name (server={server!r}, name={name!r})")
    nfs = kind == "filestore"
    source = f"{server}:/{name}" if nfs else f"{server}@tcp:/{name}"
    found = {"kind": kind, "type": "nfs" if nfs else "lustre", "server": server, "name": name, "source": source, "mount_point": MOUNT_POINTS[kind]}
    return found | ({"lustre_version": lustre_version} if lustre_version and not nfs else {})


def lustre_mount_point(mount_point: str) -> tuple[str, str]:
    """``IP@tcp:/FILESYSTEM`` (Managed Lustre's ``mount_point`` output) → (IP, FILESYSTEM).

    Example:
        >>> lustre_mount_point("10.137.40.2@tcp:/lustrefs")
        ('10.137.40.2', 'lustrefs')
    """
    server, _, name = mount_point.partition("@tcp:/")
    return server, name
