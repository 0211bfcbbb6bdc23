for f in "$@"; do echo "== $f"; grep -h "mean" $f.log | grep -o "mean [0-9.]* %" | tr '\n' ' '; grep -h "mean" $f.log | grep -o "mean [0-9.]*" | awk '{s+=$2;n++} END {printf " avg %.2f\n", s/n}'; grep -h "WAN/S" $f.log | python3 -c '
import sys,re
tot={"d":0,"p":0,"a":0,"w":0,"n":0}
for l in sys.stdin:
    d=int(re.search(r"DATA headers [0-9.]+ \((\d+)\)",l).group(1)); p=int(re.search(r"piggybacked ACKs [0-9.]+ \((\d+)\)",l).group(1)); a=int(re.search(r"ACK datagrams [0-9.]+ \((\d+)",l).group(1))
    w=float(re.search(r"WAN/S site .* -> .: ([0-9.]+)",l).group(1))
    tot["d"]+=d;tot["p"]+=p;tot["a"]+=a;tot["w"]+=w;tot["n"]+=1
print("DATA %d ACK %d piggy %d: ack/data %.3f piggy/data %.3f WAN/S %.4f"%(tot["d"],tot["a"],tot["p"],tot["a"]/tot["d"],tot["p"]/tot["d"],tot["w"]/tot["n"]))
'; grep -ho "per DATA packet: .*" $f.log | head -1; grep -ho "WAN paths: [0-9]* resent, [0-9]* timeouts" $f.log | awk '{r+=$3;t+=$5} END {print "resent", r, "timeouts", t}'; done
