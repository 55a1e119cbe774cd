"""The SVG diagrams of the plan: compute topology per plane, storage / in-band pairs, the OOB plane."""
