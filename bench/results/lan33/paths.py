#!/usr/bin/env python3
"""Sum the ranks' `gocoll: path` and `mrtransport: engine` close lines of a lab
run's out file(s), split LAN (peer in the same site: rank//4) and WAN.
Usage: paths.py OUT...  (one line per file)."""
import re, sys
for f in sys.argv[1:]:
    tot = {"LAN": {}, "WAN": {}}
    acks = {}
    eng = {}
    for l in open(f, errors="replace"):
        if 'msg="gocoll: path"' in l:
            r = int(re.search(r" rank=(\d+)", l).group(1)); p = int(re.search(r" peer=(\d+)", l).group(1))
            k = "LAN" if r // 4 == p // 4 else "WAN"
            for key in ("packets", "resent", "lost", "timeouts", "spurious", "cutsDelay", "cutsLoss"):
                m = re.search(" " + key + r"=(\d+)", l)
                if m: tot[k][key] = tot[k].get(key, 0) + int(m.group(1))
        elif 'msg="mrtransport: engine"' in l:
            for kind in ("acksShort", "acksLong"):
                m = re.search(kind + r"=(\S+)", l)
                for a, v in re.findall(r"(\w+):(\d+)", m.group(1)):
                    acks[kind + "." + a] = acks.get(kind + "." + a, 0) + int(v)
            for key in ("datagramsWritten", "writeBatches", "acks", "acksOnData", "data", "timerRuns", "readBatches"):
                m = re.search(" " + key + r"=(\d+)", l)
                if m: eng[key] = eng.get(key, 0) + int(m.group(1))
    print(f)
    for k in ("LAN", "WAN"):
        print(" ", k, " ".join(f"{a}={b}" for a, b in tot[k].items()))
    print("  engine", " ".join(f"{a}={b}" for a, b in eng.items()))
    for kind in ("acksShort", "acksLong"):
        print("  " + kind, " ".join(f"{a.split('.')[1]}={b}" for a, b in acks.items() if a.startswith(kind)))
