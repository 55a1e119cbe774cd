"""Stub ConnectX tools that print what the real tools print: ``mlxconfig`` (``-e query`` with Default, Current and
Next Boot, and plain ``q``), ``flint -d <dev> q`` and ``mlnx_qos -i <port>``. Their layout comes from published
captures stored under ``tests/roles/data/`` (each file names its source in its ``#`` header lines); the stubs copy those
files next to themselves and render the stub's state into them."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"

# data file → the name the stubs read it by, next to themselves
CAPTURES = {
    "mlxconfig-e-query.txt": "mlxconfig-e-query.txt",
    "mlxconfig-query-connectx7.txt": "mlxconfig-q.txt",
    "flint-query-connectx7.txt": "flint-q.txt",
    "mlnx_qos-trust-dscp.txt": "mlnx_qos.txt",
}


def captures(*names: str) -> dict[str, tuple[str, int]]:
    """``stubs/<name>`` → (text, mode) for the named data files (all when none are named)."""
    wanted = names or tuple(CAPTURES)
    return {f"stubs/{CAPTURES[name]}": ((DATA / name).read_text(encoding="utf-8"), 0o644) for name in wanted}


MLXCONFIG = r"""#!/usr/bin/env python3
# stub mlxconfig (MFT): -d BDF [-e] q|query prints every parameter the NIC lists, laid out as the captures next to this
# file (mlxconfig-e-query.txt: Default/Current/Next Boot, '*' where the next boot differs; mlxconfig-q.txt: a ConnectX-7's
# device lines and Next Boot rows); -y -d BDF set K=V … stores next-boot values, except names in $STUB_DIR/stuck (a NIC
# that does not take them). $STUB_DIR/hidden: names the firmware hides (not listed; set fails as MFT does);
# $STUB_DIR/ports: ports per card (LINK_TYPE_P2 … on a dual-port card); $STUB_DIR/defaults: NAME=VALUE factory defaults
# that differ from a ConnectX-7's here. State per device in its directory; argv logged.
import json, os, re, sys
d = os.environ.get("STUB_DIR") or os.path.dirname(os.path.abspath(__file__)); args = sys.argv[1:]
here = os.path.dirname(os.path.abspath(__file__))
open(os.path.join(d, "calls.log"), "a").write("mlxconfig " + " ".join(args) + "\n")
def words(name):
    p = os.path.join(d, name)
    return open(p).read().split() if os.path.exists(p) else []
def capture(name):
    return [l.rstrip("\n") for l in open(os.path.join(here, name)) if not l.startswith("#")]
dev = args[args.index("-d") + 1]
ports = int((words("ports") or ["1"])[0])
factory = {"ATS_ENABLED": 1, "MAX_ACC_OUT_READ": 0}
for p in range(1, ports + 1):
    # ConnectX-6/7 VPI ports "are initialized as InfiniBand ports" (NVIDIA XLIO docs, VPI Cards Configuration)
    factory.update({f"LINK_TYPE_P{p}": 1, f"ROCE_CC_PRIO_MASK_P{p}": 0, f"CNP_DSCP_P{p}": 4, f"CNP_802P_PRIO_P{p}": 6})
for kv in words("defaults"):
    k, v = kv.split("="); factory[k] = int(v)
hidden, stuck = words("hidden"), words("stuck")
path = os.path.join(d, dev + ".nv.json")
st = json.load(open(path)) if os.path.exists(path) else {k: {"default": v, "current": v, "next": v} for k, v in factory.items()}
if "set" in args:
    for kv in args[args.index("set") + 1:]:
        k, v = kv.split("=", 1)
        if k in hidden or k not in st: sys.exit(f"-E- The Device doesn't support {k} parameter")
        if k not in stuck: st[k]["next"] = int(v)
    json.dump(st, open(path, "w"))
    print("Apply new Configuration? (y/n) [n] : y\nApplying... Done!\n-I- Please reboot machine to load new configurations.")
    sys.exit(0)
def show(name, v):
    if name == "ATS_ENABLED": return ("False(0)", "True(1)")[v]
    if name.startswith("LINK_TYPE_"): return {1: "IB(1)", 2: "ETH(2)"}.get(v, str(v))
    return str(v)
q = capture("mlxconfig-q.txt")
names = [n for n in sorted(st) if n not in hidden]
print("\nDevice #1:\n----------\n")
for line in q:
    if line.startswith(("Device type:", "Name:", "Description:")): print(line)
print("PCI device:".ljust(20) + dev)
if "-e" in args:
    e = capture("mlxconfig-e-query.txt")
    header = next(l for l in e if l.startswith("Configurations:"))
    cols = [header.index("Default"), header.index("Current"), header.index("Next Boot")]
    first = next(l for l in e if re.match(r"^[* ]\s+[A-Z]", l))
    at = len(first) - len(first[1:].lstrip())
    print(header)
    for n in names:
        v = st[n]
        row = ("*" if v["next"] != v["default"] or v["next"] != v["current"] else " ").ljust(at) + n
        for col, key in zip(cols, ("default", "current", "next")):
            row = row.ljust(col) + show(n, v[key])
        print(row)
    print(next(l for l in e if l.startswith("The '*'")))
else:
    header = next(l for l in q if l.startswith("Configurations:"))
    row = next(l for l in q if l.startswith(" ") and l.strip())
    name_at = len(row) - len(row.lstrip()); value_at = row.index(row.split()[1], name_at + len(row.split()[0]))
    print(header)
    for n in [a for a in args[args.index("q" if "q" in args else "query") + 1:]] or names:
        if n in st and n not in hidden: print((" " * name_at + n).ljust(value_at) + show(n, st[n]["next"]))
"""

FLINT = r"""#!/bin/sh
# stub flint (MFT): -d BDF q prints the captured ConnectX-7 query next to this file (flint-q.txt) with the firmware
# version in $STUB_DIR/fw.version
STUB_DIR=${STUB_DIR:-$(dirname "$0")}
echo "flint $*" >> "$STUB_DIR/calls.log"
v=$(cat "$STUB_DIR/fw.version")
grep -v '^#' "$(dirname "$0")/flint-q.txt" | sed -e "s/^\(FW Version: *\).*/\1$v/" -e "s/^\(Product Version: *\).*/\1$v/"
"""

MLNX_QOS = r"""#!/usr/bin/env python3
# stub mlnx_qos: keeps per-port state in $STUB_DIR/<port>.json (default: its own directory), logs argv, prints the state
# into the captured output next to this file (mlnx_qos.txt, its 8-space indents the tool's tabs). Settings named in
# $STUB_DIR/stuck are accepted but not taken (a NIC that refuses them).
import json, os, sys
d = os.environ.get("STUB_DIR") or os.path.dirname(os.path.abspath(__file__)); args = sys.argv[1:]
here = os.path.dirname(os.path.abspath(__file__))
open(os.path.join(d, "calls.log"), "a").write("mlnx_qos " + " ".join(args) + "\n")
port = args[args.index("-i") + 1]
path = os.path.join(d, port + ".json")
default = {"trust": "pcp", "pfc": "0,0,0,0,0,0,0,0", "cable": "7", "dscp2prio": {str(x): x >> 3 for x in range(64)}}
st = json.load(open(path)) if os.path.exists(path) else default
for a in args:
    if a.startswith("--cable_len="): st["cable"] = a.split("=", 1)[1]
stuck = open(os.path.join(d, "stuck")).read().split() if os.path.exists(os.path.join(d, "stuck")) else []
for flag, key in (("--trust", "trust"), ("--pfc", "pfc")):
    if flag in args and key not in stuck: st[key] = args[args.index(flag) + 1]
if "--dscp2prio" in args:
    _, dscp, prio = args[args.index("--dscp2prio") + 1].split(","); st["dscp2prio"][dscp] = int(prio)
json.dump(st, open(path, "w"))
if len(args) == 2:
    for line in (l.rstrip("\n") for l in open(os.path.join(here, "mlnx_qos.txt")) if not l.startswith("#")):
        tab = "\t" + line[8:] if line.startswith(" " * 8) else line
        if line.startswith("Priority trust state:"): print("Priority trust state: " + st["trust"])
        elif line.startswith("dscp2prio mapping:"):
            if st["trust"] != "dscp": continue  # the tool prints the map only under trust dscp
            print(line)
            for p in range(8):
                ds = "".join(f"{int(k):02d}," for k, v in sorted(st["dscp2prio"].items(), key=lambda kv: -int(kv[0])) if v == p)
                while ds:
                    print(f"\tprio:{p} dscp:" + ds[:24]); ds = ds[24:]
        elif line.strip().startswith("prio:"): continue
        elif line.startswith("Cable len:"): print("Cable len: " + st["cable"])
        elif line.strip().startswith("enabled"): print("\tenabled     " + "".join(f"{x}   " for x in st["pfc"].split(",")))
        else: print(tab)
"""
