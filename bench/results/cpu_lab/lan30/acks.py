import sys, glob, os, re
for d in sorted(glob.glob(sys.argv[1] + "/*.r*")):
    out = open(d + "/out").read()
    tot = {}
    for l in out.splitlines():
        if 'msg="mrtransport: engine"' in l:
            for kind in ("acksShort", "acksLong"):
                m = re.search(kind + r"=(\S+)", l)
                for k, v in re.findall(r"(\w+):(\d+)", m.group(1)):
                    key = kind + "." + k
                    tot[key] = tot.get(key, 0) + int(v)
    s = {k: sum(v for kk, v in tot.items() if kk.startswith(k) and not kk.endswith("packets")) for k in ("acksShort", "acksLong")}
    print(os.path.basename(d), "LAN: acks", s["acksShort"], "of packets", tot.get("acksShort.packets"), "every", tot.get("acksShort.every"),
          "| WAN: acks", s["acksLong"], "of packets", tot.get("acksLong.packets"))
