"""What a push shows and records, masked: the one view of results, errors, progress and configs that every output
channel uses (the CLI's text and ``--json``, the change record and audit log, the Ansible module's result).

A ``PushResult`` keeps device text verbatim (its backup restores the device); nothing of it leaves for a person or a
log except through here, where ``fabric.apply.secrets`` masks every secret form of every NOS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fabric.apply.secrets import ANY_NOS, mask_lines, mask_secrets
from fabric.apply.transaction import PushResult

Progress = Callable[[str, str], None]


def shown_text(text: str) -> str:
    """A message, an error or an exception's text as shown: masked.

    Example:
        >>> shown_text("rejected: enable secret 0 hunter2")
        'rejected: enable secret 0 <masked:f52fbd32>'
    """
    return mask_secrets(ANY_NOS, text)


def shown_result(result: PushResult) -> dict[str, Any]:
    """One device's result as shown and recorded: its flags, its error and its diff masked."""
    return {
        "changed": result.changed,
        "committed": result.committed,
        "rolled_back": result.rolled_back,
        "error": shown_text(result.error) if result.error else result.error,
        "diff": mask_lines(ANY_NOS, result.diff),
    }


def shown_progress(progress: Progress) -> Progress:
    """``progress`` with every step masked (a step may quote a device's error)."""

    def masked_progress(device: str, step: str) -> None:
        progress(device, shown_text(step))

    return masked_progress


def shown_config_diffs(results: list[PushResult], candidates: Mapping[str, str]) -> list[dict[str, str]]:
    """Ansible's diff-mode entries, one per switch that differs: its running config against its candidate, both masked."""
    return [
        {
            "before_header": f"{r.device} (running)",
            "after_header": f"{r.device} (candidate)",
            "before": mask_secrets(ANY_NOS, r.backup),
            "after": mask_secrets(ANY_NOS, candidates.get(r.device, "")),
        }
        for r in results
        if r.changed
    ]
