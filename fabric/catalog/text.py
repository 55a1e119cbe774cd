"""Strict strings the catalog's data files and the cluster definition share: free text, GPU models, catalog keys.

They live here, on the catalog's floor, because the catalog's schemas (``node_model``, ``switch_model``,
``cloud_model``) sit below the definition's models; ``fabric.model.strings`` re-exports them beside the definition's
other strict strings.

Free text splits in two by where it goes. Text that reaches a device (a switch config, a command, a tag a cloud API
stores) is printable ASCII on one line (``fabric.model.strings``' ``TagValue``, ``Identifier`` and the token types).
Text that reaches no device, only the operator's screen, reports and plan.json (``Description``: cluster, plane,
hardware-profile and catalog descriptions), may be any printable Unicode, "Rechenzentrum Süd — 北京", but never a
control or formatting character (C0, DEL, C1, a line or paragraph separator, a bidirectional override such as U+202E,
a zero-width character, a Unicode tag) and never longer than ``DESCRIPTION_MAX``.

Example:
    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(Description).validate_python("Rechenzentrum Süd — 北京")
    'Rechenzentrum Süd — 北京'
    >>> TypeAdapter(Description).validate_python("Süd\\u202eevil")
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for function-after[_printable(), constrained-str]
    ...
"""

from __future__ import annotations

import unicodedata
from typing import Annotated

from pydantic import AfterValidator, Field

# One line of printable Unicode. The class lists, in the Basic Multilingual Plane, every character of the Unicode
# (14.0) categories Cc (C0, DEL, C1), Cf (format: soft hyphen, Arabic and Syriac marks, zero-width characters, the
# bidirectional embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069, word joiners, the BOM,
# interlinear annotation), Zl and Zp (U+2028, U+2029); surrogates (Cs) pydantic refuses as not Unicode. Only \x and \u
# escapes (two and four hex digits), so a JSON Schema (ECMA-262) validator reads the pattern too. ``_printable`` then checks the same
# categories over every plane with the running Python's Unicode database: the tag characters U+E0000-U+E007F that hide
# text, the other astral format characters, and those later Unicode versions add.
DESCRIPTION_RE = (
    r"^[^\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    r"\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]*$"
)
DESCRIPTION_MAX = 200
UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode general categories no free text may hold: control, format, surrogate, line and paragraph separator."""

# A GPU model as catalogs name it (H100-SXM5-80GB, MI300X-192GB): the shape of a Kubernetes label value (letters,
# digits, '-', '_', '.', alphanumeric at both ends, at most 63; Kubernetes "Labels and Selectors"), as NVIDIA's GPU
# feature discovery publishes the product in the nvidia.com/gpu.product label, and one token, as a Slurm GRES type
# (gres.conf(5) ``Type=``) would take it.
GPU_MODEL_RE = r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$"
# The name of a switch model or node profile, which is also its data file's name (<name>.yaml): a lower-case DNS label.
CATALOG_KEY_RE = r"^[a-z0-9][a-z0-9-]{0,62}$"


PATTERN_HELP: dict[str, str] = {
    DESCRIPTION_RE: (
        "is not one line of printable text: remove line breaks, control characters and invisible formatting characters "
        "(bidirectional overrides, zero-width characters)"
    ),
    GPU_MODEL_RE: "is not a GPU model name: letters, digits, '-', '_' and '.', at most 63, e.g. H100-SXM5-80GB",
    CATALOG_KEY_RE: "is not a catalog name: a-z, 0-9 and '-', at most 63, starting with a letter or digit, e.g. sn5600",
}
"""What a value that misses one of these patterns is, and what to write instead (the definition's and the catalog's
loaders both say it)."""


def _printable(value: str) -> str:
    """``value`` when none of its characters is a control, format, surrogate or separator character."""
    for char in value:
        if unicodedata.category(char) in UNPRINTABLE_CATEGORIES:
            msg = f"holds U+{ord(char):04X} ({unicodedata.name(char, 'a control character')}); write one line of printable text"
            raise ValueError(msg)
    return value


Description = Annotated[
    str,
    Field(
        pattern=DESCRIPTION_RE,
        max_length=DESCRIPTION_MAX,
        description="Free text that reaches no device (reports, plan.json and the screen only): one line of printable Unicode, "
        "at most 200 characters, no control or formatting characters.",
    ),
    AfterValidator(_printable),
]
GpuModel = Annotated[
    str,
    Field(
        pattern=GPU_MODEL_RE,
        description="GPU model, e.g. H100-SXM5-80GB: letters, digits, '-', '_', '.', at most 63 (a Kubernetes label value's shape).",
    ),
]
CatalogKey = Annotated[str, Field(pattern=CATALOG_KEY_RE, description="A catalog name (its data file is <name>.yaml): a-z, 0-9 and '-', at most 63.")]
