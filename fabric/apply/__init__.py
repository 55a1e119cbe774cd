"""Stage 4 — apply: the only code that touches switches. ``push`` is its public face (the CLI, the Ansible module and
the benches use it); ``transaction``, ``rollout``, ``record`` and ``nos/`` carry one change to every device, safely;
``checks/`` holds what a push verifies on a device. The local twin (``fabric.twin``) is reached through the same
access records and adapters as a real fabric; nothing here imports it."""
