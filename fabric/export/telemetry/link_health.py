"""Link health from the plan: FEC uncorrectable frames, pre-FEC BER, flaps and optics per switch port, each alert
labelled with what the plan says is on the other end (node, rail, leaf, peer) (pure: plan → rules, panels, labels).

The plan's labels reach Prometheus as an info series, ``gpufabric_link_info{source, port, leaf, node, node_port, rail,
peer, peer_port, tier}`` with the port's speed in bit/s as its value, one per switch end of every compute cable:
``telemetry/link-labels.prom`` in the text exposition format, for node_exporter's textfile collector on ONE host
(the joins below need one series per port). An alert joins it on ``(source, port)``; a port the file does not name
still alerts, without the plan's labels (``… or … unless on(source, port) gpufabric_link_info``).

Series (gnmic's names, ``telemetry.switch`` docstring; SONiC's after ``telemetry.sonic``'s relabelling):

- **SONiC** (target COUNTERS_DB, ``COUNTERS/Ethernet*/<counter>``): ``SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES``
  and ``SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES`` (flex-counted since sonic-net/sonic-swss#1994, shown as FEC_UNCORR
  and FEC_CORR by ``show interfaces counters fec-stats``, sonic-net/sonic-utilities#2027) and
  ``SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS`` (sonic-net/sonic-swss#3291, "needs to be polled to estimate pre-FEC BER").
  Pre-FEC BER is SONiC's own formula (``port_rates.lua``, sonic-net/SONiC#1829 "Port FEC BER" HLD): corrected bits per
  second over the serdes rate; here over the port speed from the plan, which leaves out the line coding's few percent
  (the BER reads that much high). Flaps: APPL_DB ``PORT_TABLE`` ``flap_count`` (sonic-net/sonic-swss#3052, one per
  oper-status change) as ``gnmic_sonic_port_flap_count{port}``; optics: STATE_DB ``TRANSCEIVER_DOM_SENSOR``
  ``rx<N>power`` (dBm) and ``temperature`` (°C) as ``gnmic_sonic_optic_rx_power_dbm{port, lane}`` and
  ``gnmic_sonic_optic_temperature_celsius{port}``; both tables answer strings, which gnmic's processors turn into
  numbers or drop (``telemetry.sonic_link``).
- **Cumulus Linux** (gNMI): ``/interfaces/interface[name=*]/ethernet/phy/state/{rs-fec-uncorrectable-blocks,
  corrected-bits}`` up to 5.14, renamed ``/interfaces/interface[name=*]/phy/fec/state/…`` in 5.15 (CumulusNetworks/docs
  cumulus-linux-515 Whats-New, "Updated gNMI PHY metric names"); flaps are ``carrier-transitions`` (already in the
  fabric subscription); optics ``/components/component[name=*]/transceiver/physical-channels/channel[index=*]/state/
  input-power/instant`` (dBm) and ``/components/component[name=*]/state/temperature/instant`` (°C) (cumulus-linux-516
  "gNMI Streaming", Platform metrics). The input power is OpenConfig's ``decimal64`` dBm with two fraction digits
  ("in units of 0.01dBm" in the model's words), read as dBm. Transceiver components are named
  ``transceiver+panelport#`` in the 5.9 document's Platform table: the name is matched to the plan's port as it is,
  which a real switch's names may not be, so optics alerts may come without the plan's labels (unverified on a switch).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.export.telemetry.gnmi import (
    CUMULUS_PHY_NEW,
    CUMULUS_PHY_OLD,
    CUMULUS_RX_POWER,
    CUMULUS_TEMPERATURE,
    cumulus_new_names,
    gnmic_metric_name,
)
from fabric.export.telemetry.sonic import SONIC_PORT
from fabric.export.telemetry.sonic_link import SONIC_FLAPS, SONIC_RX_POWER, SONIC_TEMPERATURE
from fabric.plan.types import ClusterPlan, FabricPlan, SwitchPlan

INFO = "gpufabric_link_info"
PLAN_LABELS = ("leaf", "node", "node_port", "rail", "peer", "peer_port", "tier")
# Thresholds: starting points to tune per site, each with its reason.
PRE_FEC_BER = 1e-6  # two decades under the RS(544,514) "KP4" FEC's 2.4e-4 limit (IEEE 802.3bs); SONiC's published healthy ports read 1e-12..2e-9
PRE_FEC_BER_FOR = "10m"
FEC_UNCORRECTABLE_IN_10M = 0  # any frame FEC could not correct is a frame lost (sonic-mgmt test_intf_fec.py fails on any)
FLAPS_IN_10M = 2  # carrier transitions (SONiC flap_count: one per oper-status change): one down and one up is one flap
OPTIC_RX_DBM = -10.0  # below a 400G-DR4 module's low-power alarm (SFF-8636 thresholds, e.g. rxpowerlowalarm -8.9 dBm in sonic-platform-common#235)
OPTIC_TEMP_C = 70.0  # commercial-temperature modules are specified to a 70 °C case (temphighwarning 72.0 in sonic-platform-common#235)

CARRIER = "/interfaces/interface[name=*]/state/counters/carrier-transitions"
SONIC_COUNTERS = (
    "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES",
    "SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES",
    "SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS",
)


@dataclass(frozen=True)
class Term:
    """One NOS's series for a signal and the label that holds the port (copied to ``port``)."""

    name: str
    port_label: str = "port"

    def ported(self, expr: str) -> str:
        """``expr`` with the port in ``port``."""
        if self.port_label == "port":
            return expr
        return f'label_replace({expr}, "port", "$1", "{self.port_label}", "(.+)")'


def _nos(fabric: FabricPlan) -> dict[str, list[SwitchPlan]]:
    found: dict[str, list[SwitchPlan]] = {}
    for switch in fabric.switches:
        found.setdefault(switch.nos, []).append(switch)
    return found


@dataclass(frozen=True)
class LinkSignals:
    """The terms each link-health signal has on this fabric."""

    uncorrectable: list[Term]
    corrected_bits: list[Term]
    flaps: list[Term]
    rx_power: list[Term]
    temperature: list[Term]


def link_signals(plan: ClusterPlan) -> LinkSignals:
    """The link-health series this fabric's switches give (SONiC and Cumulus; none for other NOSes yet).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> [t.name for t in link_signals(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))).uncorrectable]
        ['gnmic_sonic_port_SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES']
    """
    empty = LinkSignals([], [], [], [], [])
    fabric = plan.fabric
    if fabric is None or fabric.link_layer != "ethernet" or not fabric.management.gnmi:
        return empty
    by_nos = _nos(fabric)
    s = LinkSignals([], [], [], [], [])
    if "sonic" in by_nos:
        s.uncorrectable.append(Term(f"{SONIC_PORT}_SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES"))
        s.corrected_bits.append(Term(f"{SONIC_PORT}_SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS"))
        s.flaps.append(Term(SONIC_FLAPS))
        s.rx_power.append(Term(SONIC_RX_POWER))
        s.temperature.append(Term(SONIC_TEMPERATURE))
    if "cumulus" in by_nos:
        for phy in sorted({CUMULUS_PHY_NEW if cumulus_new_names(sw.nos_version) else CUMULUS_PHY_OLD for sw in by_nos["cumulus"]}):
            s.uncorrectable.append(Term(gnmic_metric_name(f"{phy}/rs-fec-uncorrectable-blocks"), "interface_name"))
            s.corrected_bits.append(Term(gnmic_metric_name(f"{phy}/corrected-bits"), "interface_name"))
        s.flaps.append(Term(gnmic_metric_name(CARRIER), "interface_name"))
        s.rx_power.append(Term(gnmic_metric_name(CUMULUS_RX_POWER), "component_name"))
        s.temperature.append(Term(gnmic_metric_name(CUMULUS_TEMPERATURE), "component_name"))
    return s


def _labelled(value: str) -> str:
    """``value`` (by source and port) with the plan's labels where the info series names the port, else as it is."""
    keep = ", ".join(PLAN_LABELS)
    return f"(({value}) * on(source, port) group_left({keep}) ({INFO} > bool 0) or ({value}) unless on(source, port) {INFO})"


def _sum(terms: list[Term], inner: str) -> str:
    """``inner`` (``{}`` for the selector) per term, the port made common, summed by source and port, OR-ed over NOSes."""
    return " or ".join(f"sum by (source, port) ({t.ported(inner.format(t.name))})" for t in terms)


def _alert(name: str, expr: str, duration: str, severity: str, summary: str) -> dict[str, object]:
    return {"alert": name, "expr": expr, "for": duration, "labels": {"severity": severity}, "annotations": {"summary": summary}}


WHERE = (
    "{{ $labels.source }} {{ $labels.port }}"
    "{{ with $labels.node }} to {{ . }} {{ $labels.node_port }} (rail {{ $labels.rail }}){{ end }}"
    "{{ with $labels.peer }} to {{ . }} {{ $labels.peer_port }}{{ end }}"
)


def link_rules(plan: ClusterPlan) -> list[dict[str, object]]:
    """The link-health alerts this fabric's series feed; empty where none does."""
    s = link_signals(plan)
    rules: list[dict[str, object]] = []
    if s.uncorrectable:
        value = _labelled(_sum(s.uncorrectable, "increase({}[10m])"))
        rules.append(
            _alert(
                "LinkFecUncorrectable",
                f"{value} > {FEC_UNCORRECTABLE_IN_10M}",
                "0s",
                "critical",
                f'{WHERE}: {{{{ $value | printf "%.0f" }}}} frames FEC could not correct in 10 minutes'
                " (frames lost: reseat or replace the cable or optic)",
            )
        )
    if s.corrected_bits:
        keep = ", ".join(PLAN_LABELS)
        ber = f"({_sum(s.corrected_bits, 'rate({}[5m])')}) / on(source, port) group_left({keep}) {INFO}"
        rules.append(
            _alert(
                "LinkPreFecBerHigh",
                f"{ber} > {PRE_FEC_BER:g}",
                PRE_FEC_BER_FOR,
                "warning",
                f"{WHERE}: pre-FEC BER {{{{ $value }}}} above {PRE_FEC_BER:g} (a degrading cable, optic or dirty connector)",
            )
        )
    if s.flaps:
        rules.append(
            _alert(
                "LinkFlappingPlanned",
                f"{_labelled(_sum(s.flaps, 'increase({}[10m])'))} > {FLAPS_IN_10M}",
                "0s",
                "warning",
                f'{WHERE} changed carrier about {{{{ $value | printf "%.0f" }}}} times in 10 minutes',
            )
        )
    if s.rx_power:
        rules.append(
            _alert(
                "OpticRxPowerLow",
                f"{_labelled(_lowest(s.rx_power))} < {OPTIC_RX_DBM:g}",
                "5m",
                "warning",
                f"{WHERE}: optic receives {{{{ $value }}}} dBm on its weakest lane (under {OPTIC_RX_DBM:g} dBm)",
            )
        )
    if s.temperature and s.rx_power:
        rules.append(
            _alert(
                "OpticTemperatureHigh",
                f"{_labelled(_hottest(s))} > {OPTIC_TEMP_C:g}",
                "5m",
                "warning",
                f"{WHERE}: {{{{ $value }}}} °C (over {OPTIC_TEMP_C:g} °C)",
            )
        )
    return rules


def _lowest(terms: list[Term]) -> str:
    return " or ".join(f"min by (source, port) ({t.ported(t.name)})" for t in terms)


def _hottest(s: LinkSignals) -> str:
    """Each transceiver's temperature: the components that also report a lane's RX power (not fans, PSUs or the ASIC)."""
    hot = " or ".join(f"max by (source, port) ({t.ported(t.name)})" for t in s.temperature)
    return f"(({hot}) and on(source, port) ({_lowest(s.rx_power)}))"


def link_labels(plan: ClusterPlan) -> str:
    """``link-labels.prom``: one ``gpufabric_link_info`` per switch end of each compute cable (value: bit/s)."""
    fabric = plan.fabric
    if fabric is None:
        return ""
    rails = {(n.hostname, i.name): i.rail for n in plan.nodes for i in n.interfaces}
    tiers = {s.name: s.tier for s in fabric.switches}
    lines = [
        "# HELP gpufabric_link_info The plan's view of a switch port: what is cabled to it. Value: the port speed in bit/s.",
        "# TYPE gpufabric_link_info gauge",
    ]
    for link in fabric.links:
        bits = link.speed_gbps * 1_000_000_000
        if link.kind == "host":
            rail = rails.get((link.b_device, link.b_port))
            ends = [(link.a_device, link.a_port, {"leaf": link.a_device, "node": link.b_device, "node_port": link.b_port, "rail": rail})]
        else:
            leaf = link.a_device if tiers.get(link.a_device) == "leaf" else ""
            ends = [
                (link.a_device, link.a_port, {"leaf": leaf, "peer": link.b_device, "peer_port": link.b_port}),
                (link.b_device, link.b_port, {"leaf": leaf, "peer": link.a_device, "peer_port": link.a_port}),
            ]
        for device, port, extra in ends:
            labels = {"source": device, "port": port, "tier": tiers.get(device, ""), **{k: v for k, v in extra.items() if v not in (None, "")}}
            text = ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items())
            lines.append(f"{INFO}{{{text}}} {bits}")
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def link_panels(plan: ClusterPlan) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """Dashboard panels of the link-health row: (title, unit, [(expr, legend)])."""
    s = link_signals(plan)
    legend = "{{source}} {{port}} {{node}}{{peer}}"
    panels: list[tuple[str, str, list[tuple[str, str]]]] = []
    if s.uncorrectable:
        panels.append(("FEC uncorrectable frames (10m)", "short", [(_labelled(_sum(s.uncorrectable, "increase({}[10m])")) + " > 0", legend)]))
    if s.corrected_bits:
        keep = ", ".join(PLAN_LABELS)
        ber = f"topk(20, ({_sum(s.corrected_bits, 'rate({}[5m])')}) / on(source, port) group_left({keep}) {INFO})"
        panels.append(("Pre-FEC BER (worst 20 ports)", "sci", [(ber, legend)]))
    if s.flaps:
        panels.append(("Link flaps (10m)", "short", [(_labelled(_sum(s.flaps, "increase({}[10m])")) + " > 0", legend)]))
    if s.rx_power:
        panels.append(("Optics: weakest lane RX power (lowest 20)", "dBm", [(f"bottomk(20, {_labelled(_lowest(s.rx_power))})", legend)]))
    if s.temperature and s.rx_power:
        panels.append(("Optics: temperature (hottest 20)", "celsius", [(f"topk(20, {_labelled(_hottest(s))})", legend)]))
    return panels
