"""Bare-metal nodes: run ``playbooks/site.yml`` against a cluster definition through ansible-runner."""
