"""Arista EOS: compute, storage / in-band and OOB switch configs as CLI text."""
