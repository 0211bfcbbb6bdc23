#!/usr/bin/env python3
"""acks2.py DIR...: for each run DIR (a .long or .short dir): totals over the whole run, all ranks."""
import sys, re, collections
for d in sys.argv[1:]:
    s = collections.Counter()
    for l in open(d + "/out"):
        if 'msg="mrtransport: engine"' in l:
            for k, v in re.findall(r'(\w+)=(\d+)\b', l):
                if k in ("data", "acks", "acksOnData", "datagramsWritten"): s[k] += int(v)
            for kind in ("acksShort", "acksLong"):
                m = re.search(kind + r'=(\S+)', l)
                if m:
                    for k, v in re.findall(r'(\w+):(\d+)', m.group(1)): s[kind[4] + "." + k] += int(v)
    L = sum(s[k] for k in s if k.startswith("L.") and k != "L.packets"); S = sum(s[k] for k in s if k.startswith("S.") and k != "S.packets")
    print(d.split("/")[-3] if "raw" in d else d, d.split(".")[-1], f"data {s['data']} acks {s['acks']} | S {S} ({s['S.packets']/max(S,1):.1f} pk/ACK): every {s['S.every']} held {s['S.held']} last {s['S.last']} credit {s['S.credit']} ctl {s['S.control']} gap {s['S.gap']} | L {L} ({s['L.packets']/max(L,1):.1f} pk/ACK): held {s['L.held']} every {s['L.every']} last {s['L.last']} ctl {s['L.control']} credit {s['L.credit']} gap {s['L.gap']}")
