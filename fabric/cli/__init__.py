"""The command line: one module per command group; ``fabric.__main__`` only calls ``main``."""
