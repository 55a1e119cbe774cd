"""Grid layout of the dashboard: panel ids and positions in reading order, the datasource as a dashboard variable.

Grafana's dashboard JSON model (grafana.com/docs/grafana/latest/dashboards/build-dashboards/view-dashboard-json-model/,
"Panels", "Panel size and position": ``gridPos`` ``w`` 1-24, the width divided into 24 columns, ``h`` in grid height
units, ``x``/``y`` in the same units; ``type: "row"`` panels hold the panels below them; ``templating.list`` the
variables). The datasource is a variable of type ``datasource`` limited to Prometheus ("Add and manage variables",
"Add a data source variable"), and every panel and query names it as ``${datasource}``, so the file works both
imported and provisioned.
"""

from __future__ import annotations

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
DATASOURCE_VARIABLE: dict[str, object] = {
    "name": "datasource",
    "label": "Prometheus",
    "type": "datasource",
    "query": "prometheus",
    "hide": 0,
    "current": {},
}
SCHEMA_VERSION = 39
_WIDTH = 12  # two panels per row of the 24-column grid
_HEIGHT = 8


class Layout:
    """Panel ids and grid positions in reading order."""

    def __init__(self) -> None:
        self.panels: list[dict[str, object]] = []
        self._y = 0
        self._x = 0

    def row(self, title: str) -> None:
        """A row panel across the grid, starting a new line."""
        if self._x:
            self._y += _HEIGHT
            self._x = 0
        self.panels.append({"id": len(self.panels) + 1, "type": "row", "title": title, "collapsed": False, "gridPos": self._pos(24, 1), "panels": []})
        self._y += 1

    def panel(self, title: str, unit: str, targets: list[tuple[str, str]]) -> None:
        """A time series panel of ``(expr, legend)`` targets, two to a line."""
        self.panels.append(
            {
                "id": len(self.panels) + 1,
                "type": "timeseries",
                "title": title,
                "datasource": DATASOURCE,
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "gridPos": self._pos(_WIDTH, _HEIGHT),
                "targets": [
                    {"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": e, "legendFormat": legend} for i, (e, legend) in enumerate(targets)
                ],
            }
        )
        self._x += _WIDTH
        if self._x >= 24:
            self._x = 0
            self._y += _HEIGHT

    def _pos(self, w: int, h: int) -> dict[str, int]:
        return {"x": self._x, "y": self._y, "w": w, "h": h}
