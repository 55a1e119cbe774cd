"""Load-balancing intent (``fabric.load_balancing``) per NOS: what each tier's NOS, release and ASIC can render, and the
reason (with its source) where it cannot.

Rendered:
- Cumulus Linux ECMP hash: ``nv set system forwarding ecmp-hash <field> on|off`` (CL <= 5.14) / ``enabled|disabled``
  (CL 5.15); fields and values from NVIDIA's NVUE OpenAPI schema per release (``nvueschema`` models v5_9..v5_15, the
  check ``fabric/lint/nvue_schema.py`` runs on every rendered line).
- Cumulus Linux adaptive routing: ``nv set router adaptive-routing enable on`` and per fabric port ``nv set interface
  <swp> router adaptive-routing enable on`` (CL <= 5.14) / ``state enabled`` (CL 5.15; NVUE reference "Adaptive
  Routing": "In Cumulus Linux 5.14 and earlier, you specify enable on or enable off instead of state enabled or state
  disabled"), on Spectrum-4 only (NVUE reference: "Cumulus Linux 5.6 supports adaptive routing on Spectrum-4. Cumulus
  Linux 5.5 and earlier supports adaptive routing on Spectrum-3 and Spectrum-2 as a beta feature").
- SONiC ECMP hash: ``SWITCH_HASH|GLOBAL`` ``ecmp_hash`` (the generic hash, HLD sonic-net/SONiC doc/hash/hash-design.md;
  model ``sonic-hash.yang``, on branches 202405 @cfc766e1 and 202411 @566f5575 alike and since 202305, vendored in
  tests/data/sonic-yang and checked with libyang like every other table), the wanted fields only; applies where the
  ASIC's SAI reports them (STATE_DB ``SWITCH_CAPABILITY|switch`` ``HASH|NATIVE_HASH_FIELD_LIST``, same HLD).
- EOS dynamic load balancing (adaptive routing): ``ip hardware fib load-balance distribution dynamic``, pyavd 6.4
  eos_cli_config_gen ``ip_hardware.fib.load_balance_distribution.dynamic.enabled`` ("Enable dynamic load balancing",
  template eos/ip-hardware.j2), so the line passes the pyavd check every EOS render goes through; Arista TOI "ECMP Load
  Balancing DLB" (EOS 4.30.2F, https://www.arista.com/en/support/toi/tag/load-balancing): "support for Dynamic Load
  Balancing (DLB) on Equal Cost Multi Path (ECMP) groups", every release this project claims (4.32-4.34) being later.
- NX-OS ECMP hash: ``ip load-sharing address source-destination port source-destination`` (5-tuple),
  ``… source-destination`` (addresses) or ``… destination port destination``; Cisco Nexus 9000 Series NX-OS Interfaces
  Configuration Guide, Release 10.3(x), "Configuring ECMP Load Balancing": "ip load-sharing address {destination port
  destination | source-destination [port source-destination | gre | gtpu | ipv6-flowlabel | ttl | udf …]} … Configures
  the ECMP load-sharing algorithm for data traffic". No parser this project runs reads the line (the cisco.nxos resource
  modules have none), so the quote is its proof; the form is in fabric/lint/forms/nxos.yaml. The command has no
  protocol selector: ``ip-protocol`` in the intent changes nothing on NX-OS.
Refused: see ``REFUSED``.
"""

from __future__ import annotations

from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding
from fabric.model.load_balancing import LoadBalancingSpec

NVUE_SCHEMA = "NVIDIA NVUE OpenAPI schema, nvueschema models v5_0..v5_18"
# (nos, feature) -> why it is not rendered, with the source.
REFUSED: dict[tuple[str, str], str] = {
    ("cumulus", "bth-destination-qp"): f"NVUE's `system forwarding ecmp-hash` has no BTH or queue-pair field in any release ({NVUE_SCHEMA})",
    ("sonic", "bth-destination-qp"): (
        "sonic-hash.yang's hash-field (SWITCH_HASH ecmp_hash) has no BTH or queue-pair field on 202405 or 202411 "
        "(sonic-buildimage src/sonic-yang-models, tests/data/sonic-yang/<release>)"
    ),
    ("sonic", "adaptive_routing"): (
        "community SONiC 202405/202411 carry no adaptive-routing table in the YANG models this project validates against "
        "(tests/data/sonic-yang/<release>); NVIDIA's Spectrum-X adaptive routing ships in NVIDIA's own SONiC builds"
    ),
    ("eos", "ecmp_hash"): (
        "pyavd 6.4's eos_cli_config_gen schema has no key for the ECMP hash fields of Trident/Tomahawk switches such as the "
        "catalog's 7060X5/X6 (its only hash keys are `load_balance.policies.sand_profiles`, UDP-payload hashing on Jericho "
        "(sand) platforms, and port-channel hashing), so the line could not pass the pyavd check every EOS render goes through"
    ),
    ("nxos", "bth-destination-qp"): (
        "NX-OS `ip load-sharing address` has no BTH or queue-pair field (Nexus 9000 Interfaces Configuration Guide 10.3(x), "
        "Configuring ECMP Load Balancing)"
    ),
    ("nxos", "adaptive_routing"): "NX-OS DLB is platform-specific and no parser this project checks NX-OS against reads it",
    ("frr", "ecmp_hash"): "the lab's FRR twin forwards in the Linux kernel and has no ASIC hash to set",
    ("frr", "adaptive_routing"): "the lab's FRR twin has no adaptive routing",
}
RENDERING_NOSES = frozenset({"cumulus", "sonic", "eos", "nxos"})  # each renders what REFUSED does not name for it
ADAPTIVE_ROUTING_ASIC = "Spectrum-4"  # the catalog model's description names its ASIC (fabric/catalog/data/switches)


def refusals(lb: LoadBalancingSpec, tiers: dict[str, tuple[str, str]]) -> list[Finding]:
    """Every load-balancing wish a tier's NOS or ASIC cannot render, as errors naming the tier, the reason and the fix.

    Args:
        lb: the intent.
        tiers: tier field name -> (NOS, switch model).

    Example:
        >>> lb = LoadBalancingSpec(ecmp_hash=("source-ip", "bth-destination-qp"), adaptive_routing=True)
        >>> for f in refusals(lb, {"leaf": ("cumulus", "sn4600c"), "spine": ("cumulus", "sn5600")}):
        ...     print(f.message.split(" is not rendered")[0])
        leaf (cumulus on sn4600c): bth-destination-qp
        leaf (cumulus on sn4600c): adaptive routing
        spine (cumulus on sn5600): bth-destination-qp
    """
    found: list[Finding] = []
    for tier, (nos, model) in tiers.items():
        wanted: list[tuple[str, str]] = []
        if lb.ecmp_hash is not None:
            wanted.append(("ecmp_hash", "ecmp_hash"))
            wanted += [("ecmp_hash", "bth-destination-qp")] if "bth-destination-qp" in lb.ecmp_hash else []
        if lb.adaptive_routing:
            wanted.append(("adaptive_routing", "adaptive_routing"))
        for key, feature in wanted:
            reason = REFUSED.get((nos, feature)) or (None if nos in RENDERING_NOSES else f"{nos} has no rendered form of it")
            if reason is None and nos == "nxos" and feature == "ecmp_hash" and nxos_load_sharing(lb) is None:
                reason = f"NX-OS `ip load-sharing address` hashes on one of {NXOS_FORMS_IN_WORDS} (Interfaces Configuration Guide 10.3(x))"
            if reason is None and feature == "adaptive_routing" and nos == "cumulus":
                description = SWITCH_MODELS[model].description if model in SWITCH_MODELS else model
                if ADAPTIVE_ROUTING_ASIC not in description:
                    reason = (
                        f"{model} ({description}) is not {ADAPTIVE_ROUTING_ASIC}; Cumulus Linux 5.6 and later support adaptive "
                        "routing on Spectrum-4 only (NVUE reference, Adaptive Routing)"
                    )
            if reason is not None:
                what = feature if feature != key else key.replace("_", " ")
                msg = f"{tier} ({nos} on {model}): {what} is not rendered: {reason}; remove it or choose a switch that has it"
                found.append(Finding(("fabric", "load_balancing", key), msg))
    return found


def cumulus_hash_lines(lb: LoadBalancingSpec, release_words: tuple[str, str]) -> list[tuple[str, str]]:
    """(NVUE ecmp-hash field, value) for the five fields NVUE has: the wanted ones on, the rest off.

    Example:
        >>> cumulus_hash_lines(LoadBalancingSpec(ecmp_hash=("source-ip", "destination-ip")), ("on", "off"))[:3]
        [('source-ip', 'on'), ('destination-ip', 'on'), ('ip-protocol', 'off')]
    """
    if lb.ecmp_hash is None:
        return []
    on, off = release_words
    five = ("source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port")
    return [(field, on if field in lb.ecmp_hash else off) for field in five]


# sonic-hash.yang typedef hash-field (202405 @cfc766e1, 202411 @566f5575): the native hash field of each intent field.
SONIC_HASH_FIELDS: dict[str, str] = {
    "source-ip": "SRC_IP",
    "destination-ip": "DST_IP",
    "ip-protocol": "IP_PROTOCOL",
    "source-port": "L4_SRC_PORT",
    "destination-port": "L4_DST_PORT",
}


def sonic_switch_hash(lb: LoadBalancingSpec) -> dict[str, dict[str, list[str]]]:
    """The ``SWITCH_HASH`` table: ``GLOBAL`` ``ecmp_hash`` with the wanted fields in the intent's order; empty without intent.

    Example:
        >>> sonic_switch_hash(LoadBalancingSpec(ecmp_hash=("source-ip", "destination-ip", "source-port")))
        {'GLOBAL': {'ecmp_hash': ['SRC_IP', 'DST_IP', 'L4_SRC_PORT']}}
        >>> sonic_switch_hash(LoadBalancingSpec())
        {}
    """
    if lb.ecmp_hash is None:
        return {}
    return {"GLOBAL": {"ecmp_hash": [SONIC_HASH_FIELDS[f] for f in lb.ecmp_hash if f in SONIC_HASH_FIELDS]}}


# Cisco Nexus 9000 NX-OS Interfaces Configuration Guide 10.3(x), "Configuring ECMP Load Balancing": the intent's fields
# (ip-protocol aside: the command has no selector for it) -> the ip load-sharing form that hashes on exactly them.
NXOS_LOAD_SHARING: dict[frozenset[str], str] = {
    frozenset({"source-ip", "destination-ip", "source-port", "destination-port"}): "source-destination port source-destination",
    frozenset({"source-ip", "destination-ip"}): "source-destination",
    frozenset({"destination-ip", "destination-port"}): "destination port destination",
}
NXOS_FORMS_IN_WORDS = "the 5-tuple, source and destination address, or destination address and port"


def nxos_load_sharing(lb: LoadBalancingSpec) -> str | None:
    """The NX-OS ``ip load-sharing address`` line for the intent's hash fields; None without intent or without a form.

    Example:
        >>> nxos_load_sharing(LoadBalancingSpec(ecmp_hash=("source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port")))
        'ip load-sharing address source-destination port source-destination'
        >>> nxos_load_sharing(LoadBalancingSpec(ecmp_hash=("source-ip", "source-port"))) is None
        True
    """
    if lb.ecmp_hash is None:
        return None
    form = NXOS_LOAD_SHARING.get(frozenset(lb.ecmp_hash) - {"ip-protocol", "bth-destination-qp"})
    return f"ip load-sharing address {form}" if form else None
