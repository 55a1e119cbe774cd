"""SONiC mixed speeds on one SN5600 (issue 28): dynamic port breakout, each cage in the platform.json mode of its ports."""

from __future__ import annotations

import json

from tests.render.conftest import files_of


def test_a_sonic_sn5600_leaf_runs_400g_host_cages_and_800g_uplink_cages() -> None:
    db = json.loads(files_of("render/sonic-mixed")["switches/leaf01/config_db.json"])
    assert db["DEVICE_METADATA"]["localhost"]["hwsku"] == "ACS-SN5600"  # the platform's default SKU
    modes = db["BREAKOUT_CFG"]
    assert modes["Ethernet0"] == {"brkout_mode": "2x400G[200G,100G,50G,40G,25G,10G]"}  # host cage
    assert modes["Ethernet32"] == {"brkout_mode": "1x800G[400G,200G,100G,50G,40G,25G,10G]"}  # uplink cage
    port = db["PORT"]
    assert (port["Ethernet4"]["lanes"], port["Ethernet4"]["speed"], port["Ethernet4"]["alias"]) == ("4,5,6,7", "400000", "etp1b")
    assert (port["Ethernet32"]["lanes"], port["Ethernet32"]["speed"], port["Ethernet32"]["alias"]) == ("32,33,34,35,36,37,38,39", "800000", "etp5")
    assert "Ethernet36" not in port  # a 1x800G cage has one port
