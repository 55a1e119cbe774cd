"""Literal secrets in a definition: found by key name and by value shape, reported without echoing the value.

A definition is committed, rendered into plans, tags and logs, so a secret in it leaks everywhere. Keys are split into
words (``db_pwd`` → db, pwd; ``AWS_ACCESS_KEY_ID`` → aws, access, key, id; ``sshKey`` → ssh, key) and a key whose words
name a secret is an error unless its last word marks a reference (``password_env``, ``ssh_key_env``). Values of any key
are checked for well-known secret shapes: private keys, cloud access keys, tokens, password hashes.

Example:
    >>> [f.message[:40] for f in scan_secrets({"aws": {"tags": {"AWS_ACCESS_KEY_ID": "x"}}})]
    ['literal secret in the definition (key na']
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import cast

from fabric.errors import Finding

Path_ = tuple[str | int, ...]
REFERENCE_ADVICE = (
    "secrets never go into the definition, which is committed, rendered and logged; keep the value in an "
    "environment variable and reference it (e.g. 'password_env: FABRIC_SWITCH_PASSWORD'), or use an SSH agent"
)
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
SECRET_WORDS = frozenset(
    {"password", "passwd", "passphrase", "pass", "pwd", "secret", "secrets", "token", "credential", "credentials"}
    | {"community", "apikey", "passkey", "privatekey", "psk", "cookie"}
)
SECRET_PAIRS = frozenset(
    {("api", "key"), ("access", "key"), ("private", "key"), ("ssh", "key"), ("secret", "key"), ("auth", "key")}
    | {("client", "secret"), ("signing", "key"), ("encryption", "key"), ("session", "key"), ("account", "key"), ("shared", "key")}
)
REFERENCE_WORDS = frozenset({"env", "ref", "file", "path"})  # password_env, ssh_key_file: the name of where it is
# Value shapes, each from its issuer's documentation of the format.
VALUE_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a private key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")),  # RFC 7468 §10, OpenSSH PROTOCOL.key
    ("an AWS access key id", re.compile(r"\b(AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),  # AWS IAM "unique identifiers" prefixes
    ("a GitHub token", re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),  # GitHub token formats
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),  # Slack token types
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),  # Google Cloud API keys
    ("an Azure storage key", re.compile(r"AccountKey=[A-Za-z0-9+/=]{20,}|[?&]sig=[A-Za-z0-9%+/=]{20,}")),  # connection string / SAS
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*")),  # RFC 7519
    ("a password hash", re.compile(r"\$(1|5|6|y|2[aby])\$[./A-Za-z0-9$=]{8,}")),  # crypt(5) MD5, SHA-256/512, yescrypt, bcrypt
)


def key_words(key: str) -> list[str]:
    """The words of a key, lower case: ``AWS_ACCESS_KEY_ID`` → aws, access, key, id.

    Example:
        >>> key_words("sshKeyEnv"), key_words("db_pwd")
        (['ssh', 'key', 'env'], ['db', 'pwd'])
    """
    return [w.lower() for w in _WORD.findall(key)]


def is_secret_key(key: str) -> bool:
    """Whether a key names a secret value (not a reference to one).

    Example:
        >>> is_secret_key("AWS_ACCESS_KEY_ID"), is_secret_key("password_env"), is_secret_key("pkey")
        (True, False, False)
    """
    words = key_words(key)
    if not words or words[-1] in REFERENCE_WORDS:
        return False
    return any(w in SECRET_WORDS for w in words) or any(pair in SECRET_PAIRS for pair in pairwise(words))


def secret_shape(value: str) -> str | None:
    """What kind of secret ``value`` looks like, or None.

    Example:
        >>> secret_shape("AKIAIOSFODNN7EXAMPLE"), secret_shape("gpu-su01")
        ('an AWS access key id', None)
    """
    return next((kind for kind, pattern in VALUE_SHAPES if pattern.search(value)), None)


def scan_secrets(data: object, path: Path_ = ()) -> list[Finding]:
    """Findings for every literal secret in raw YAML data: secret key names with a value, and secret-shaped values."""
    found: list[Finding] = []
    if isinstance(data, dict):
        for key, value in cast("dict[object, object]", data).items():
            sub = (*path, str(key))
            shape = secret_shape(str(key))
            if shape is not None:
                found.append(Finding(sub, f"literal secret in the definition (a key that looks like {shape}): {REFERENCE_ADVICE}"))
            elif is_secret_key(str(key)) and _holds_value(value):
                found.append(Finding(sub, f"literal secret in the definition (key name '{key}'): {REFERENCE_ADVICE}"))
            else:
                found.extend(scan_secrets(value, sub))
    elif isinstance(data, list):
        for index, item in enumerate(cast("list[object]", data)):
            found.extend(scan_secrets(item, (*path, index)))
    elif isinstance(data, str) and (shape := secret_shape(data)) is not None:
        found.append(Finding(path, f"literal secret in the definition (a value that looks like {shape}): {REFERENCE_ADVICE}"))
    return found


def _holds_value(value: object) -> bool:
    """A scalar other than empty/false, or a list holding one (a mapping is a block of settings, scanned inside)."""
    if isinstance(value, list):
        return any(_holds_value(item) for item in cast("list[object]", value))
    return not isinstance(value, dict) and value not in (None, "", False)
