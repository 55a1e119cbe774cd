"""The compute fabric: sizing, two- and three-tier builders, cabling and the per-switch facts (AVD's facts layer)."""
