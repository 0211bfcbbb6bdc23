#!/usr/bin/env python3
"""tsum.py DIR: per run, rank 0's times a call (out-of-place, in-place, us), the job's CPU-s (all ranks), the delay daemons' CPU-s (where DIR/delayd is), the engines' counters summed."""
import sys, glob, os, re
for d in sorted(glob.glob(sys.argv[1] + "/*.r*")):
    out = open(d + "/out").read()
    fail = "run failed" in out
    m = re.search(r"\[rank 0\]\s+16777216\s+\d+\s+\S+\s+\S+\s+-1\s+(\d+)\s+\S+\s+(\S+)\s+\d+\s+(\d+)\s+\S+\s+(\S+)", out)
    cpu = 0.0
    for f in glob.glob(d + "/cpu.*"):
        t = open(f).read().split()
        try: cpu += float(t[-2]) + float(t[-1])
        except Exception: pass
    cnt = {}
    for l in out.splitlines():
        if 'msg="mrtransport: engine"' in l:
            for k, v in re.findall(r"(\w+)=(-?\d+)\b", l):
                if k in ("datagramsWritten", "writeBatches", "readBatches", "timerRuns", "data", "acks", "naps"):
                    cnt[k] = cnt.get(k, 0) + int(v)
    dd = ""
    if os.path.exists(d + "/delayd"):
        hz = float(open(d + "/hz").read()) if os.path.exists(d + "/hz") else 100.0
        dd = f"delayd_s {float(open(d + '/delayd').read()) / hz:.2f}"
    ld = open(d + "/load").read().split()
    print(os.path.basename(d), "FAIL" if fail else "", "load", ld[1], ld[-2] if len(ld) > 6 else "?",
          "time_us", (m.group(1), m.group(3)) if m else None, "busbw", (m.group(2), m.group(4)) if m else None, f"cpu_s {cpu:.1f}", dd, cnt)
