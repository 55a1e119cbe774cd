"""What each InfiniBand switch model's ASIC does in the network: SHARP (in-network reductions) and adaptive routing.

A model missing here has no source saying it aggregates or routes adaptively, and a definition asking for either on
it is refused (``fabric/model/rules/ib_features.py``). Sources, per row:

- SHARP generations: UFM Enterprise User Manual v6.23.11, "Appendix - NVIDIA SHARP Integration": "Hardware capabilities
  in Quantum-1 and later generations"; SHARP Rev 3.3.0, "Setting up NVIDIA SHARP Environment": "Run NVIDIA Switch-IB
  2/NVIDIA Quantum/NVIDIA Quantum-2 switches with the supported firmware versions"; NVIDIA Quantum firmware
  27.2000.2708: "SHARP now supports running 2 flows in parallel", 27.2000.2626: "SHARP (LLT) is at GA level, whereas
  SHARP (SAT) is at Beta level". Quantum-X800 (XDR): "4th generation NVIDIA SHARP" (NVIDIA certification study notes,
  secondary; the model is not rendered anyway, NVOS).
- Adaptive routing: InfiniBand Cluster Bring-up Procedure v1.0, "Adaptive Routing": "The subnet manager (SM) enables and
  configures the Adaptive Routing mechanism on the fabric switches ... identifies which ones support Adaptive Routing";
  QM8700 data: "Adaptive routing", "Collective offloads (Mellanox SHARP technology)" (CESNET eInfra-docs, Barbora
  network page, quoting the QM8700 data sheet).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IbSwitchFeatures:
    """The in-network features of one InfiniBand switch model.

    Attributes:
        asic: the switch ASIC family.
        sharp: the SHARP generation the ASIC carries (2: Quantum, 3: Quantum-2, 4: Quantum-X800).
        adaptive_routing: whether the ASIC does adaptive routing (programmed by the SM).
    """

    asic: str
    sharp: int
    adaptive_routing: bool


IB_SWITCH_FEATURES: Mapping[str, IbSwitchFeatures] = {
    "qm8700": IbSwitchFeatures("Quantum (HDR)", 2, adaptive_routing=True),
    "qm9700": IbSwitchFeatures("Quantum-2 (NDR)", 3, adaptive_routing=True),
    "q3400": IbSwitchFeatures("Quantum-X800 (XDR)", 4, adaptive_routing=True),
}
