"""Reports of a plan and its findings: the console (rich tables) and one self-contained HTML page."""
