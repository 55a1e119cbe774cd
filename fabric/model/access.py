"""How gpufabric reaches switches: user name and references to secrets, never the secrets."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabric.model.base import EnvVarName, SpecModel
from fabric.model.strings import FilePath, UserName


class CredentialsSpec(SpecModel):
    """Switch login. Secrets are references: an environment variable or the SSH agent, read only when a session opens."""

    username: UserName = "admin"
    password_env: EnvVarName | None = Field(
        default=None, description="Environment variable holding the switch login password (diff, push, rollback, verify)."
    )
    ssh_key_env: EnvVarName | None = Field(default=None, description="Environment variable holding the path of a private key.")
    use_ssh_agent: bool = True


class SwitchAccessSpec(SpecModel):
    """Management access to every switch of the fabric."""

    credentials: CredentialsSpec = CredentialsSpec()
    known_hosts: FilePath = Field(default="known_hosts", description="Known-hosts file for host-key verification, relative to the definition.")
    transport: Literal["ssh"] = "ssh"
    port: int = Field(default=22, ge=1, le=65535)
