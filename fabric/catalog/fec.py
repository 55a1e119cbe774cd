"""Which port speeds need RS-FEC: the one rule the renderers (which set it) and the physical-layer lint (which checks it)
share.

RS(544,514) "KP4" FEC is part of every PAM4 PHY of 50G and 100G per lane, named by the amendment that brought the PHY
and the clause that defines its FEC: 50GBASE-R (IEEE 802.3cd-2018, clause 134), 100GBASE-CR2/SR2 (802.3cd-2018) and
100GBASE-CR1 (802.3ck-2022) with clause 91 in its RS(544,514) mode, 200G/400GBASE-R with the clause 119 PCS
(802.3bs-2017 over 50G lanes, 802.3ck-2022 over 100G lanes), 800GBASE-R with the clause 172 PCS (802.3df-2024).
RS(528,514) "KR4" FEC is part of 100GBASE-CR4/KR4/SR4 over 4 x 25G NRZ lanes (IEEE 802.3bj-2014 clause 91, 802.3bm-2015
for SR4). A single 25G lane (25GBASE-CR, IEEE 802.3by-2016 clause 108) or slower leaves FEC optional, so the NOS
default decides there.
"""

from __future__ import annotations

from fabric.catalog.switches import SWITCH_MODELS


def rs_fec_clause(speed_gbps: int, lanes: int) -> str | None:
    """The IEEE 802.3 amendment whose PHY includes RS-FEC at ``speed_gbps`` over ``lanes`` lanes, or None when FEC
    is optional there.

    Example:
        >>> rs_fec_clause(400, 8), rs_fec_clause(400, 4), rs_fec_clause(100, 2)
        ('IEEE 802.3bs-2017 clause 119', 'IEEE 802.3ck-2022 clause 119', 'IEEE 802.3cd-2018 clause 91')
        >>> rs_fec_clause(100, 4), rs_fec_clause(50, 1)
        ('IEEE 802.3bj-2014 clause 91', 'IEEE 802.3cd-2018 clause 134')
        >>> rs_fec_clause(800, 8), rs_fec_clause(100, 1), rs_fec_clause(25, 1), rs_fec_clause(40, 4)
        ('IEEE 802.3df-2024 clause 172', 'IEEE 802.3ck-2022 clause 91', None, None)
    """
    per_lane = speed_gbps / lanes if lanes else speed_gbps
    if per_lane >= 50:
        if speed_gbps >= 800:
            return "IEEE 802.3df-2024 clause 172"
        amendment = "IEEE 802.3ck-2022" if per_lane >= 100 else "IEEE 802.3bs-2017" if speed_gbps >= 200 else "IEEE 802.3cd-2018"
        return f"{amendment} clause {119 if speed_gbps >= 200 else 134 if speed_gbps == 50 else 91}"
    if speed_gbps == 100 and lanes == 4:
        return "IEEE 802.3bj-2014 clause 91"
    return None


def port_lanes(model_name: str, speed_gbps: int, mode_gbps: int | None = None) -> int:
    """Electrical lanes of a port of ``model_name`` at ``speed_gbps``: the cage's lanes over the ports its breakout
    mode (``mode_gbps``, else the port's own speed) splits it into; an unknown speed counts as the whole cage.

    Example:
        >>> port_lanes("sn5600", 800), port_lanes("sn5600", 400), port_lanes("sn5600", 100, 200)
        (8, 4, 2)
    """
    model = SWITCH_MODELS[model_name]
    fanout = model.fanout(mode_gbps or speed_gbps) or model.ports_per_cage
    return max(model.lanes // fanout, 1)


def needs_rs_fec(model_name: str, speed_gbps: int, mode_gbps: int | None = None) -> bool:
    """Whether a port of ``model_name`` at ``speed_gbps`` (in a cage broken out at ``mode_gbps``) must run RS-FEC.

    Example:
        >>> needs_rs_fec("sn5600", 400), needs_rs_fec("sn5600", 25, 200)
        (True, False)
    """
    return rs_fec_clause(speed_gbps, port_lanes(model_name, speed_gbps, mode_gbps)) is not None
