"""Stage 4 — apply: the only code that touches devices (the local twin now; the transactional push builds on it)."""
