"""Switch models and NOSes the catalog knows of but gpufabric does not build for, each with the reason and the fix.

``UNRENDERED_NOS``: a NOS a catalog model runs (its data file lists it, so ports and names are described) for which
no renderer exists; a tier that asks for it is refused with this reason instead of a bare "not one of ...".
``REFUSED_SWITCH_MODELS``: a model users ask for that the schema cannot describe; a tier naming it is refused with
the reason instead of "unknown switch model".
"""

from __future__ import annotations

from collections.abc import Mapping

UNRENDERED_NOS: Mapping[str, str] = {
    # NVIDIA Q32xx and Q34xx XDR 800Gb/s InfiniBand Switch Systems User Manual (docs.nvidia.com/networking/display/
    # xdrswitcheshwum/nvos, 2026-01), section "NVOS" of the XDR switch manual: "NVOS is the networking operating system that
    # manages the NVLink switches" (sic, in the Q3400 manual), "refer to NVIDIA NVOS User Manual for InfiniBand Switches";
    # "System Bring-Up of Managed Systems": "NVOS supports configurations through NVUE only", with an appendix "Moving
    # from MLNX-OS to NVOS". NVOS User Manual for InfiniBand Switches v25.02.x: a CLI (nv set/show) and OpenAPI.
    "nvos": (
        "NVOS (NVIDIA's OS on the Quantum-X800 XDR switches, configured through NVUE only) has no renderer in gpufabric: "
        "its InfiniBand NVUE schema (subnet manager, partitions, SHARP) has not been read here, and MLNX-OS commands do "
        "not apply to it. Run the subnet manager on hosts (infiniband.subnet_manager.kind: opensm or ufm) and configure "
        "the switches with NVUE by hand, or pick an MLNX-OS model (qm9700, qm8700)"
    ),
}

REFUSED_SWITCH_MODELS: Mapping[str, str] = {
    # Arista's 7800R4 is sold as the 7804R4 / 7808R4 / 7812R4 / 7816R4 chassis (4 to 16 line-card slots; Arista
    # product naming, the data sheet itself was not retrieved here: the slot counts are unverified). The switch schema
    # describes one fixed front panel (cages x ports per cage); a chassis has one per line card, and a mix of cards.
    "7800r4": (
        "the Arista 7800R4 is a modular chassis (4 to 16 line-card slots, each card its own ports); the catalog describes "
        "fixed-port switches only (one front panel of cages). Use the fixed 7060x6-64pe (64 x 800G), or describe one "
        "line card as a fixed model in fabric/catalog/data/switches/ if a single card is the whole switch"
    ),
}
