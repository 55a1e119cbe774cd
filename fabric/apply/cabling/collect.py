"""Where the neighbours come from: a directory of recorded replies (one file per device, or one subnet-wide InfiniBand
file), or each switch live over its management session (the push's own path, ``show`` commands only).

A reply that is not what its form promises is refused naming the device, the file and the problem (``InputError``:
exit 2); a switch that cannot be reached is not read, and the cables only it could show are reported unchecked.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fabric.apply.cabling.ib import parse_iblinkinfo, parse_ibnetdiscover
from fabric.apply.cabling.parse import MAX_REPLY_BYTES, Seen, name, parse_eos, parse_lldpctl, parse_nvue, parse_nxos, parse_sonic
from fabric.apply.nos import Adapter
from fabric.apply.rollout import Connector, open_session
from fabric.apply.session import DeviceAccess
from fabric.errors import Finding, InputError

Parser = Callable[[str, str], list[Seen]]
FORMS: dict[str, Parser] = {
    "lldpctl.json": parse_lldpctl,
    "sonic.txt": parse_sonic,
    "nvue.txt": parse_nvue,
    "eos.json": parse_eos,
    "nxos.json": parse_nxos,
    "ibnetdiscover.txt": parse_ibnetdiscover,
    "iblinkinfo.txt": parse_iblinkinfo,
}
"""File suffix → parser: ``<device>.<suffix>`` under ``--from DIR``."""
SUBNET = frozenset({"ibnetdiscover.txt", "iblinkinfo.txt"})
"""Forms that report every device of an InfiniBand subnet: their file is named for the subnet, not a device."""

COMMANDS: dict[str, tuple[str, str]] = {
    # NOS → (show command, form). SONiC: sonic-utilities ``show lldp table`` (scripts/lldpshow); Cumulus Linux 5: NVUE
    # reference "nv show interface lldp"; EOS and NX-OS: "show lldp neighbors detail | json".
    "sonic": ("show lldp table", "sonic.txt"),
    "cumulus": ("nv show interface lldp", "nvue.txt"),
    "eos": ("show lldp neighbors detail | json", "eos.json"),
    "nxos": ("show lldp neighbors detail | json", "nxos.json"),
}
MAX_FILES = 20_000  # replies a directory may hold: a 4,000-node cluster with its switches


@dataclass(slots=True)
class Replies:
    """What the devices said: every neighbour, which devices were read, and why the others were not."""

    seen: list[Seen] = field(default_factory=list[Seen])
    replied: set[str] = field(default_factory=set[str])
    unread: dict[str, str] = field(default_factory=dict[str, str])

    def add(self, device: str, found: list[Seen]) -> None:
        """One device's (or one subnet's) neighbours."""
        self.seen += found
        self.replied |= {device} if device else {s.device for s in found}


def form_of(file: Path) -> str | None:
    """The form a reply file's name declares (``leaf01.eos.json`` → ``eos.json``), or None."""
    return next((suffix for suffix in FORMS if file.name.endswith(f".{suffix}") and len(file.name) > len(suffix) + 1), None)


def parse_reply(text: str, device: str, form: str, where: str) -> list[Seen]:
    """One reply through its parser; a bad one is an ``InputError`` naming ``device`` and ``where``."""
    try:
        return FORMS[form](text, device)
    except ValueError as exc:
        message = f"the {form} reply of {device or 'the subnet'} is not usable: {exc}; record it again with the command in docs/switches.md"
        raise InputError([Finding((device,) if device else (), message, file=where)], where) from exc


def read_dir(directory: Path) -> Replies:
    """Every reply file under ``directory`` (not its subdirectories; dot files and ``*.md`` notes are skipped).

    Raises:
        InputError: not a directory, too many files, a file that is not a regular file under the size bound, a name with
            no known form, or a reply its parser refuses.
    """
    where = str(directory)
    if not directory.is_dir():
        raise InputError([Finding((), f"--from {where!r} is not a directory of recorded replies", file=where)], where)
    entries = sorted(p for p in directory.iterdir() if not p.name.startswith(".") and not p.name.endswith(".md"))  # notes beside the replies
    if len(entries) > MAX_FILES:
        raise InputError([Finding((), f"{len(entries)} files, over the bound of {MAX_FILES}", file=where)], where)
    replies = Replies()
    for path in entries:
        form = form_of(path)
        info = path.lstat()
        problem = (
            f"no known reply form: name it <device>.<form>, form one of {', '.join(FORMS)}"
            if form is None
            else "not a regular file (a link or a directory)"
            if not stat.S_ISREG(info.st_mode)
            else f"{info.st_size} bytes, over the {MAX_REPLY_BYTES}-byte bound"
            if info.st_size > MAX_REPLY_BYTES
            else ""
        )
        if problem or form is None:
            raise InputError([Finding((), problem, file=str(path))], str(path))
        device = "" if form in SUBNET else path.name[: -len(form) - 1]
        if device:
            try:
                name(device, "the file name's device")
            except ValueError as exc:
                raise InputError([Finding((), str(exc), file=str(path))], str(path)) from exc
        text = path.read_bytes().decode("utf-8", errors="replace")
        replies.add(device, parse_reply(text, device, form, str(path)))
    return replies


def read_live(
    access: Mapping[str, DeviceAccess], nos: Mapping[str, str], adapters: Mapping[str, Adapter], connector: Connector = open_session
) -> Replies:
    """Each switch of ``access`` whose NOS has an LLDP command, one at a time over its session; a switch that cannot be
    reached or refuses the command is recorded as not read, with why."""
    replies = Replies()
    for device in sorted(access):
        command = COMMANDS.get(nos.get(device, ""))
        if command is None:
            replies.unread[device] = f"no LLDP read-back for NOS {nos.get(device, '?')!r}; record its neighbours into --from DIR"
            continue
        show, form = command
        try:
            session = connector(access[device], adapters[nos[device]])
        except Exception as exc:  # noqa: BLE001 - an unreachable switch is not read, not a crash
            replies.unread[device] = f"cannot connect: {exc}"
            continue
        try:
            text = session.show(show)
        except Exception as exc:  # noqa: BLE001 - reported per device
            replies.unread[device] = f"{show!r} failed: {exc}"
            continue
        finally:
            session.disconnect()
        replies.add(device, parse_reply(text, device, form, f"{device}: {show}"))
    return replies
