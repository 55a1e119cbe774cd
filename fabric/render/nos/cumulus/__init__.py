"""NVIDIA Cumulus Linux (NVUE): compute and storage / in-band switch configs as ``nv set`` lines."""
