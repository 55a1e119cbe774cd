# The part of ansible-runner's interface gpufabric uses (the package ships no type information).
from collections.abc import Callable, Mapping
from typing import Any

class Runner:
    rc: int | None
    status: str

def run(
    *,
    private_data_dir: str,
    project_dir: str,
    playbook: str,
    inventory: list[str],
    cmdline: str | None = ...,
    limit: str | None = ...,
    tags: str | None = ...,
    skip_tags: str | None = ...,
    extravars: Mapping[str, object] | None = ...,
    envvars: Mapping[str, str] | None = ...,
    event_handler: Callable[[Mapping[str, Any]], bool] | None = ...,
    quiet: bool = ...,
    suppress_env_files: bool = ...,
) -> Runner: ...
