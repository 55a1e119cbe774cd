"""A few SVG primitives for the diagrams: escaped text, boxes and polylines as strings, and a text-width estimate.

No layout here; ``fabric.render.diagrams.topology`` places everything. Widths are estimates for DejaVu Sans / Helvetica
(an average advance of about 0.6 em), enough to size boxes so that names fit.
"""

from __future__ import annotations


def escape(body: str) -> str:
    """``html.escape(body)``, the same text, without importing ``html`` (its entity table is ~1 ms of every render's
    start-up; ``xml.sax.saxutils`` imports ``urllib.request``, ~10 ms): ``&`` first, then ``< > " '``.

    Example:
        >>> print(escape('a&b <c> "d" it' + chr(39) + 's'))
        a&amp;b &lt;c&gt; &quot;d&quot; it&#x27;s
    """
    return body.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#x27;")


FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
EM_ADVANCE = 0.62  # average glyph advance of DejaVu Sans in em; slightly generous so that text stays inside its box


def text_width(text: str, size: float) -> float:
    """Estimated width in px of ``text`` set at ``size`` px."""
    return len(text) * size * EM_ADVANCE


def text(x: float, y: float, body: str, size: float = 12, *, anchor: str = "start", weight: str = "normal", fill: str = "#222") -> str:
    """One ``<text>`` element with its baseline at ``y``."""
    bold = ' font-weight="bold"' if weight != "normal" else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" text-anchor="{anchor}" fill="{fill}"{bold}>{escape(body)}</text>'


def rect(x: float, y: float, w: float, h: float, fill: str, *, stroke: str = "#555", radius: float = 3, dash: bool = False) -> str:
    """A rectangle with rounded corners."""
    dashed = ' stroke-dasharray="4 3"' if dash else ""
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{radius:g}" fill="{fill}" stroke="{stroke}"{dashed}/>'


def line(points: list[tuple[float, float]], stroke: str, width: float = 1.5) -> str:
    """An open polyline through ``points``."""
    coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline points="{coords}" fill="none" stroke="{stroke}" stroke-width="{width:g}"/>'


def tooltip(body: str) -> str:
    """A ``<title>`` child: the hover text of the enclosing group in browsers."""
    return f"<title>{escape(body)}</title>"


def document(width: float, height: float, title: str, elements: list[str]) -> str:
    """A standalone SVG document with a white background."""
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{escape(FONT)}">\n'
        f"<title>{escape(title)}</title>\n"
        f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>\n'
    )
    return head + "\n".join(elements) + "\n</svg>\n"
