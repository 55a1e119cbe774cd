"""Templates for the renderers, with Jinja imported only when the first one is printed.

``template(name)`` loads a compiled template from ``fabric.render._jinja``, importing Jinja then: a render whose switches
are built in Python alone (SONiC's compute switches, their ``frr.conf``) never pays the some 16 ms that importing Jinja
costs. The directory for compiled templates is ``fabric.render.template_cache``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import Template


def template(name: str) -> Template:
    """The compiled template ``name`` (``<nos>/<file>.j2``), guarded for its NOS."""
    from fabric.render._jinja import template as compiled

    return compiled(name)
