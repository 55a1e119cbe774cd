"""The local twin: an on-prem fabric rebuilt on this machine (network namespaces, FRR, sshd, an NVUE stand-in).

It plugs into the push path only through the interfaces a real fabric uses: a ``DeviceAccess`` per switch
(``fabric.twin.access``) and the same NOS adapters. Nothing outside ``fabric.twin`` and the CLI imports it."""
