"""The out-of-band management network: its switches, port budget, addresses, cables and per-switch facts."""
