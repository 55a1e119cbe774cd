"""Mask secret material in device text before it is shown, recorded or logged: one path for every output channel.

Running configs carry secrets gpufabric never renders: local users' password hashes, enable secrets, SNMP communities
and SNMPv3 users' keys, TACACS+/RADIUS keys, BGP and OSPF keys, private keys. A diff against a real running config (or
a device's error output) may quote them, so every line shown or recorded goes through ``mask_lines`` (or
``mask_secrets`` for a whole text) first; ``fabric.apply.shown`` applies it to each output channel. Each secret becomes
``<masked:xxxxxxxx>`` where ``xxxxxxxx`` is the start of its SHA-256: a changed secret still shows as a change, the
value does not. Masking is for display and records only; what is sent to a device (and a backup that restores it) is
never masked.

Linear time: a line is split into whitespace-separated tokens once and scanned left to right; a keyword token starts
a form of ``fabric.apply.secret_forms`` (the documented command forms, per NOS), matched over a bounded number of
following tokens. JSON (SONiC config_db, JSON-patch diff lines) is read by ``json`` or by a string lexer that never
backs up. A line longer than ``MAX_LINE`` is never shown: a placeholder naming its length takes its place.

Example:
    >>> mask_secrets("eos", "username admin privilege 15 secret sha512 $6$abc$def")
    'username admin privilege 15 secret sha512 <masked:be52fb47>'
    >>> mask_secrets("eos", "snmp-server user ops g v3 auth sha s3cret priv aes pr1v")
    'snmp-server user ops g v3 auth sha <masked:1ec1c26b> priv aes <masked:7dfe80dd>'
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from typing import cast

from fabric.apply.secret_forms import ANY, ASSIGNED, FORMS, NUMBER, SONIC_FIELDS, SONIC_SECRET_TABLES, Form, Slot
from fabric.errors import Finding, InputError

MAX_LINE = 64 * 1024
"""Characters of the longest line shown; a longer one (no switch config line is near it) becomes a placeholder."""
ANY_NOS = ""  # where the NOS is not known: every form of every NOS applies
MARK = "<masked:"
_SPLIT = re.compile(r"((?:\s|\\[nrt])+)")  # whitespace, and the escapes of a newline inside a JSON string
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----")  # bounded: no backtracking over the line
_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----")
_FORM_SPAN = 12  # places (tokens and separators) the widest form spans after its keyword: net-snmp's createUser, 10
_COLON = re.compile(r"\s*:")
_LEAD = "+-'\"`([{"
_TRAIL = "'\"`)]},;:"


def _index(forms: Iterable[Form]) -> dict[str, tuple[Form, ...]]:
    index: dict[str, list[Form]] = {}
    for form in forms:
        if form not in index.setdefault(form.keyword, []):
            index[form.keyword].append(form)
    return {keyword: tuple(found) for keyword, found in index.items()}


_INDEX = {nos: _index(forms) for nos, forms in FORMS.items()}
_INDEX[ANY_NOS] = _index(form for forms in FORMS.values() for form in forms)


def read_env_secret(variable: str | None, field: str, definition: str | None = None) -> str | None:
    """The value of the environment variable ``switches.credentials.<field>`` names, or None when it names none.

    ``definition`` is the file the name comes from, for the error message.

    Example:
        >>> read_env_secret(None, "password_env") is None
        True

    Raises:
        InputError: the variable is named but not set (or empty).
    """
    if variable is None:
        return None
    value = os.environ.get(variable)
    if not value:
        msg = f"environment variable {variable} is not set; export it before running (the definition names it here)"
        raise InputError([Finding(("switches", "credentials", field), msg, file=definition)], definition)
    return value


def masked(secret: str) -> str:
    """The marker that replaces ``secret``: the same secret always gives the same marker.

    Example:
        >>> masked("public")
        '<masked:efa1f375>'
    """
    return f"<masked:{hashlib.sha256(secret.encode()).hexdigest()[:8]}>"


def too_long(length: int) -> str:
    """The placeholder of a line longer than ``MAX_LINE``: never shown, not even masked.

    Example:
        >>> too_long(1_000_000)
        '<line of 1000000 characters not shown>'
    """
    return f"<line of {length} characters not shown>"


def mask_secrets(nos: str, text: str) -> str:
    """``text`` (a config, a diff, a device's output) with every secret of ``nos``'s command forms masked.

    An unknown NOS gets every form of every NOS, so nothing passes unmasked for want of a name. A whole JSON
    document (a SONiC running config) is masked field by field and written back as ``json.dumps`` writes it.

    Example:
        >>> mask_secrets("cumulus", "nv set service snmp-server readonly-community public access any")
        'nv set service snmp-server readonly-community <masked:efa1f375> access any'
    """
    document = _mask_document(nos, text)
    return document if document is not None else "\n".join(mask_lines(nos, text.split("\n")))


def mask_lines(nos: str, lines: Iterable[str]) -> list[str]:
    """``mask_secrets`` over the lines of a diff or a config, one output line per line (a private key's lines, and
    JSON objects over several lines, are followed from line to line)."""
    scanner = _Scanner(_INDEX.get(nos, _INDEX[ANY_NOS]), json_patch=nos in {"sonic", ANY_NOS} or nos not in _INDEX)
    return [scanner.line(line) for line in lines]


def is_masked(token: str) -> bool:
    """Already a marker (or a placeholder), alone or as an assignment's value (``secret=<masked:…>``): masking it again
    changes nothing."""
    bare = token.lstrip(_LEAD)
    return bare.startswith((MARK, "<line of ")) or bare.partition("=")[2].startswith((MARK, "<line of "))


class _Scanner:
    """One pass over lines: the open private-key block and the JSON nesting carry from line to line."""

    def __init__(self, index: dict[str, tuple[Form, ...]], *, json_patch: bool) -> None:
        self.index = index
        self.json_patch = json_patch
        self.in_key = False  # inside a private key block
        self.depth = 0  # JSON braces open
        self.community_depth: int | None = None  # the depth whose keys are SNMP communities

    def line(self, line: str) -> str:
        if len(line) > MAX_LINE:
            return too_long(len(line))
        brace = line.find("{") if self.json_patch and not self.in_key and line.rstrip().endswith("}") else -1
        if brace >= 0:  # a JSON object ending the line (a JSON-patch op, quoted or negated): masked field by field
            op = _mask_json_line(self.index, line[brace:])
            if op is not None:
                return self._tokens(line[:brace]) + op
        out: list[str] = []
        at = 0
        while True:  # private key blocks, from their BEGIN to their END line (or on: never shown unterminated)
            if self.in_key:
                end = _PEM_END.search(line, at)
                out.append(masked(line[at : end.end() if end else len(line)]))
                if end is None:
                    return "".join(out)
                at, self.in_key = end.end(), False
            begin = _PEM_BEGIN.search(line, at)
            out.append(self._plain(line[at : begin.start() if begin else len(line)]))
            if begin is None:
                return "".join(out)
            at, self.in_key = begin.start(), True

    def _plain(self, line: str) -> str:
        if '"' in line or "{" in line or "}" in line:
            line = self._json_fields(line)
        return self._tokens(line)

    def _tokens(self, line: str) -> str:
        """Every token is looked at as a keyword once (a secret that is itself a keyword starts its own form too);
        only a quoted secret running over many tokens is stepped over whole, so the pass stays linear."""
        parts = _SPLIT.split(line)  # tokens at even places, separators at odd ones
        original = list(parts)
        i = 0
        while i < len(parts):
            token = original[i]
            if "=" in token:
                name, _, value = token.partition("=")
                if name.lstrip(_LEAD).lower() in ASSIGNED and value and not is_masked(value):
                    parts[i] = f"{name}={masked(value)}"
            forms = self.index.get(token.lstrip(_LEAD).rstrip(_TRAIL).lower(), ())
            end = next((end for form in forms if (end := self._form(parts, original, i, form)) is not None), i)
            i = end + 2 if end - i > _FORM_SPAN else i + 2
        return "".join(parts)

    def _form(self, parts: list[str], original: list[str], at: int, form: Form) -> int | None:
        """Mask ``form``'s secret after the keyword at ``at``; the index of the last token masked, or None."""
        if form.after and (at < 2 or original[at - 2].lstrip(_LEAD).lower() not in form.after):
            return None
        secret = _after_slots(parts, at + 2, form.slots)
        if secret is None or parts[secret].lower() in form.unless:
            return None
        last = _mask_token(parts, secret)
        if form.then is not None and (second := _after_slots(parts, last + 2, form.then)) is not None:
            last = _mask_token(parts, second)
        return last

    def _json_fields(self, line: str) -> str:
        """Secret fields' values (and SNMP communities) of the JSON in ``line``: a lexer over its strings, linear."""
        out: list[str] = []
        at = 0
        secret_value = False
        while True:
            start = line.find('"', at)
            gap = line[at:] if start < 0 else line[at:start]
            value = gap.strip(" :\t").split(",")[0].split("}")[0].split("]")[0].strip()
            if secret_value and value and not value.startswith(("{", "[")) and not is_masked(value):
                gap = gap.replace(value, masked(value), 1)  # a number or a bare word
            if secret_value and value:
                secret_value = False
            self.depth += gap.count("{") - gap.count("}")
            if self.community_depth is not None and self.depth < self.community_depth:
                self.community_depth = None
            out.append(gap)
            if start < 0:
                return "".join(out)
            end, closed = _string_end(line, start)
            text = line[start + 1 : end - 1 if closed else end]
            key = _COLON.match(line, end) is not None
            if (secret_value and not key) or (key and self.community_depth == self.depth):
                out.append(f'"{text if is_masked(text) else masked(text)}"')
            else:
                out.append(line[start:end])
            secret_value = key and text.lower() in SONIC_FIELDS
            if key and text in SONIC_SECRET_TABLES:
                self.community_depth = self.depth + 1
            at = end


def _string_end(line: str, start: int) -> tuple[int, bool]:
    """The index after the JSON string opening at ``start``, and whether it closes (else it runs to the line's end)."""
    at = start + 1
    while True:
        close = line.find('"', at)
        if close < 0:
            return len(line), False
        slashes = close - 1
        while slashes > start and line[slashes] == "\\":
            slashes -= 1
        if (close - 1 - slashes) % 2 == 0:
            return close + 1, True
        at = close + 1


def _after_slots(parts: list[str], at: int, slots: tuple[Slot, ...]) -> int | None:
    """The index of the secret token after ``slots`` from ``at``; an optional slot's word is the secret when no token follows it."""
    for slot in slots:
        if at >= len(parts):
            return None
        word = parts[at].lower()
        fits = ANY in slot.words or word in slot.words or (NUMBER in slot.words and word.isascii() and word.isdigit())
        if fits and (slot.required or at + 2 < len(parts)):
            at += 2
        elif slot.required:
            return None
    return at if at < len(parts) and parts[at] else None


def _mask_token(parts: list[str], at: int) -> int:
    """Mask the token at ``at`` (a quoted secret runs to its closing quote, or the end); the index of its last token."""
    token = parts[at]
    if is_masked(token):
        return at
    last = at
    if token.startswith('"') and (len(token) == 1 or not token.endswith('"')):
        while last + 2 < len(parts):
            last += 2
            if parts[last].endswith('"'):
                break
    parts[at] = masked("".join(parts[at : last + 1]))
    for i in range(at + 1, last + 1):
        parts[i] = ""
    return last


def _mask_document(nos: str, text: str) -> str | None:
    """A whole JSON object (a SONiC running config), masked field by field; None when ``text`` is not one."""
    if not text.lstrip().startswith("{") or "\n" not in text.strip():
        return None
    try:
        document: object = json.loads(text)
        if not isinstance(document, dict):
            return None
        out = json.dumps(_mask_json(_INDEX.get(nos, _INDEX[ANY_NOS]), cast("dict[str, object]", document)), indent=1, sort_keys=True)
    except (ValueError, RecursionError):
        return None
    return out + "\n" if text.endswith("\n") else out


def _mask_json_line(index: dict[str, tuple[Form, ...]], line: str) -> str | None:
    """A one-line JSON object: a JSON-patch op has its secret path segments and values masked, anything else its
    fields; None when the line is not JSON."""
    try:
        value: object = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    fields = cast("dict[str, object]", value)
    try:
        if "op" in fields and "path" in fields:
            return json.dumps(_mask_patch_op(index, fields), sort_keys=True)
        return json.dumps(_mask_json(index, fields), sort_keys=True)
    except RecursionError:
        return None


def _mask_patch_op(index: dict[str, tuple[Form, ...]], fields: dict[str, object]) -> dict[str, object]:
    """RFC 6902 op: a SNMP community in its path (or ``from``) and the value of a secret field, masked."""
    for pointer in ("path", "from"):
        parts = str(fields.get(pointer, "")).split("/")
        if pointer not in fields:
            continue
        if len(parts) > 2 and parts[1] in SONIC_SECRET_TABLES:
            parts[2] = parts[2] if is_masked(parts[2]) else masked(parts[2])
            fields[pointer] = "/".join(parts)
        if pointer == "path" and "value" in fields:
            if any(p.lower() in SONIC_FIELDS for p in parts):
                fields["value"] = _masked_json(fields["value"])
            elif len(parts) == 2:  # a whole table
                table = cast("dict[str, object]", _mask_json(index, {parts[1]: fields["value"]}))
                fields["value"] = table[parts[1]]
            else:
                fields["value"] = _mask_json(index, fields["value"])
    return fields


def _mask_json(index: dict[str, tuple[Form, ...]], value: object, *, secret_keys: bool = False) -> object:
    if isinstance(value, dict):
        entries = cast("dict[str, object]", value)
        out: dict[str, object] = {}
        for key, entry in entries.items():
            name = masked(key) if secret_keys and not is_masked(key) else key
            if key.lower() in SONIC_FIELDS:
                out[name] = _masked_json(entry)
            else:
                out[name] = _mask_json(index, entry, secret_keys=key in SONIC_SECRET_TABLES)
        return out
    if isinstance(value, list):
        return [_mask_json(index, item) for item in cast("list[object]", value)]
    if isinstance(value, str):
        scanner = _Scanner(index, json_patch=False)
        return "\n".join(scanner.line(line) for line in value.split("\n"))
    return value


def _masked_json(value: object) -> object:
    if isinstance(value, str) and is_masked(value):
        return value
    return masked(value if isinstance(value, str) else json.dumps(value, sort_keys=True))
