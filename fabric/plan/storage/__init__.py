"""The storage and in-band Ethernet networks: MLAG leaf pairs, spines, cables and per-switch facts."""
