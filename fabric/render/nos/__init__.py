"""One renderer per NOS, on the same axis as ``templates/<nos>/``: compute, storage / in-band and OOB switch families."""
