"""Config sections: one template per section per NOS, the switch's release choosing the section's variant.

A NOS renderer lists its sections in device order (``SECTIONS`` in each NOS module, with the reason for each ordering
constraint) and ``render_sections`` concatenates them. A section whose syntax changed in some release names the first
release of each variant, e.g. Cumulus management: ``{"5.15": "cumulus/management-system.j2"}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fabric.catalog.releases import release_key
from fabric.render.templating import template


@dataclass(frozen=True, slots=True)
class Section:
    """One config section of one NOS.

    Attributes:
        template: the template every release uses unless a variant applies (``<nos>/<section>.j2``).
        since: first release -> the template that release and later ones use instead.
    """

    template: str
    since: Mapping[str, str] = field(default_factory=dict[str, str])

    def template_for(self, release: str) -> str:
        """The template of this section for ``release``: the newest variant whose first release is not after it.

        Example:
            >>> s = Section("cumulus/management.j2", {"5.15": "cumulus/management-system.j2"})
            >>> s.template_for("5.14"), s.template_for("5.15")
            ('cumulus/management.j2', 'cumulus/management-system.j2')
        """
        chosen = self.template
        for first in sorted(self.since, key=release_key):
            if release_key(first) <= release_key(release):
                chosen = self.since[first]
        return chosen


def render_sections(sections: Sequence[Section], release: str, **context: object) -> str:
    """Every section's text for ``release``, in list order."""
    return "".join(template(s.template_for(release)).render(**context) for s in sections)
