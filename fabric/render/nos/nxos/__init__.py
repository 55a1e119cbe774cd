"""Cisco NX-OS (Nexus 9000): compute, storage / in-band and OOB switch configs as CLI text."""
