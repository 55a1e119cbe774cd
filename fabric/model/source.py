"""Read a definition file and parse its YAML with every resource bounded.

A definition is untrusted input, so reading it never blocks or allocates without limit:

- only regular files are read (not ``/dev/zero``, FIFOs or directories), and at most ``MAX_FILE_BYTES`` of them;
- the text must be UTF-8 (a UTF-16 byte-order mark is named as such) without control characters;
- the composer counts nesting depth and the size of the document with every alias expanded (the "billion laughs"
  alias bomb), and stops past ``MAX_DEPTH`` and ``MAX_EXPANDED_NODES`` before anything is built;
- integers longer than ``MAX_INT_DIGITS`` characters are refused before Python converts them.

Each refusal is an ``InputError`` naming the file, the line when there is one, the problem and the fix.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import NoReturn, cast

import yaml
from yaml.error import Mark

from fabric.errors import Finding, InputError, LimitError

MAX_FILE_BYTES = 4 * 1024 * 1024  # the largest example is 3 KB; 32,768 nodes with explicit addresses fit in 4 MiB
MAX_DEPTH = 32  # the schema nests 6 levels deep
MAX_EXPANDED_NODES = 250_000  # YAML nodes with aliases expanded: room for explicit addresses of every node
MAX_INT_DIGITS = 24  # the largest number in the schema is a 4-byte ASN (10 digits)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


def read_definition(path: str | Path) -> str:
    """The text of a definition file, read with bounds.

    Example:
        >>> read_definition("inventories/lab/cluster.yaml").startswith("# yaml-language-server")
        True

    Raises:
        InputError: the path is missing or not a regular file, the file is too large, not UTF-8, or holds control characters.
    """
    file = str(path)
    try:
        # Open without blocking (a FIFO would wait for a writer), then judge what was opened, not what the path named a
        # moment before: no race between the check and the read.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                _refuse(file, "the definition is not a regular file (a device, pipe or directory); give the path of a YAML file")
            if info.st_size > MAX_FILE_BYTES:
                _refuse(file, f"the definition is {info.st_size} bytes, more than {MAX_FILE_BYTES}; split it or remove what is not needed")
            data = _read_at_most(fd, MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        _refuse(file, f"cannot read the definition: {exc.strerror}; check the path")
    if len(data) > MAX_FILE_BYTES:
        _refuse(file, f"the definition is larger than {MAX_FILE_BYTES} bytes; a definition is at most that, split it or remove what is not needed")
    return decode_definition(data, file)


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit and (chunk := os.read(fd, limit - size)):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def decode_definition(data: bytes, file: str | None = None) -> str:
    """UTF-8 text of a definition (a UTF-8 byte-order mark is dropped); refuses other encodings and control characters.

    Raises:
        InputError: naming the encoding problem or the line and column of the first control character.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        _refuse(file, "the definition is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problem = f"the definition is not UTF-8: byte {data[exc.start]:#04x} at offset {exc.start} cannot be decoded; save the file as UTF-8"
        _refuse(file, problem, line)
    check_text(text, file)
    return text


def check_text(text: str, file: str | None = None) -> None:
    """Refuse control characters (other than tab and line breaks) anywhere in the text.

    Raises:
        InputError: with the line and column of the first one.
    """
    found = _CONTROL.search(text)
    if found is not None:
        line = text.count("\n", 0, found.start()) + 1
        column = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1
        code = f"U+{ord(found.group()):04X}"
        _refuse(file, f"the definition holds the control character {code} at column {column}; remove it", line)
    if len(text) > MAX_FILE_BYTES:
        _refuse(file, f"the definition is longer than {MAX_FILE_BYTES} characters; a definition is at most that")


def _refuse(file: str | None, problem: str, line: int | None = None) -> NoReturn:
    raise InputError([Finding((), problem, file=file, line=line)], file)


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting nesting depth and alias-expanded size while it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, int] = {}

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Compose one node; refuse it past the depth limit, and the document once its expanded size passes the limit."""
        self._depth += 1
        try:
            if self.check_event(yaml.AliasEvent):
                event = cast("yaml.AliasEvent", self.peek_event())  # pyright: ignore[reportUnknownMemberType]
                anchors = cast("dict[str, yaml.Node]", self.anchors)  # pyright: ignore[reportUnknownMemberType]
                target = anchors.get(str(event.anchor))
                if target is not None and id(target) not in self._sizes:
                    problem = f"alias *{event.anchor} refers to a value that contains it; a definition cannot be recursive"
                    raise LimitError(None, None, problem, cast("Mark", event.start_mark))
            if self._depth > MAX_DEPTH:
                mark = cast("Mark", cast("yaml.Event", self.peek_event()).start_mark)  # pyright: ignore[reportUnknownMemberType]
                problem = f"the document nests deeper than {MAX_DEPTH} levels; a cluster definition needs far fewer"
                raise LimitError(None, None, problem, mark)
            node: yaml.Node | None = super().compose_node(parent, index)  # pyright: ignore[reportUnknownMemberType]
        finally:
            self._depth -= 1
        if node is not None:
            self._measure(node)
        return node

    def _measure(self, node: yaml.Node) -> None:
        if id(node) in self._sizes:
            return
        size = 1
        if isinstance(node, yaml.SequenceNode):
            size += sum(self._sizes.get(id(item), 1) for item in node.value)
        elif isinstance(node, yaml.MappingNode):
            size += sum(self._sizes.get(id(k), 1) + self._sizes.get(id(v), 1) for k, v in node.value)
        elif isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:int" and len(node.value) > MAX_INT_DIGITS:
            problem = f"a number with {len(node.value)} characters; no value in a cluster definition needs more than {MAX_INT_DIGITS}"
            raise LimitError(None, None, problem, node.start_mark)
        self._sizes[id(node)] = size
        if size > MAX_EXPANDED_NODES:
            problem = (
                f"the document grows to more than {MAX_EXPANDED_NODES} values once its aliases are expanded; "
                "write the values out or use fewer aliases"
            )
            raise LimitError(None, None, problem, node.start_mark)


def load_yaml(text: str) -> tuple[yaml.Node | None, object]:
    """Compose and construct one YAML document with the bounded loader.

    Raises:
        yaml.YAMLError: the text is not YAML, or passes a bound (a ``MarkedYAMLError`` with the place).
    """
    loader = BoundedLoader(text)
    try:
        node = loader.get_single_node()
        data: object = loader.construct_document(node) if node is not None else None  # pyright: ignore[reportUnknownMemberType]
    finally:
        loader.dispose()
    return node, data
