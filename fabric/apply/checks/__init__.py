"""What a push checks on a device: routing post-checks, the neighbours of a drained switch, L2 state, read-only verify."""
