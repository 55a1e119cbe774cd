"""Stage 1 — load: the input schema (pydantic v2) and the loader that turns YAML into a validated ClusterSpec."""

from __future__ import annotations

from fabric.model.cluster import ClusterSpec
from fabric.model.loader import SourceMap, load_cluster, parse_cluster
from fabric.model.nodes import NodeGroupSpec
from fabric.model.planes import PLANE_NAMES, PlaneName
from fabric.model.qos import RoceSpec

__all__ = ["PLANE_NAMES", "ClusterSpec", "NodeGroupSpec", "PlaneName", "RoceSpec", "SourceMap", "load_cluster", "parse_cluster"]
