#!/usr/bin/env bash
# LAN p2p CPU per MiB with the site bridge's br_netfilter hooks on vs off (set by hand in s1r).
set -u
G=/tmp/me30/gocoll; LAB=me30nf; D=/tmp/me30
$G lab up --name $LAB --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
$G lab hostfile --name $LAB --slots 1 > $D/hosts
grep -E "^$LAB-(s1h1|s1h2) " $D/hosts > $D/hosts.lan
for r in 1 2 3 4; do
  order="1 0"; [ $((r % 2)) = 0 ] && order="0 1"
  for nf in $order; do
    ip netns exec $LAB-s1r sysctl -qw net.bridge.bridge-nf-call-iptables=$nf net.bridge.bridge-nf-call-ip6tables=$nf net.bridge.bridge-nf-call-arptables=$nf
    raw=$D/lan.$r.$nf.txt
    $G run --hostfile $D/hosts.lan --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -- \
      sh -c "exec /usr/bin/time -f '# rankcpu %U %S' $G bench p2p --time 8s" > $raw 2>&1
    awk -v r=$r -v nf=$nf -v load="$(cut -d' ' -f1 /proc/loadavg)" '/# total:/ { for (i = 1; i <= NF; i++) if ($i == "MiB") m = $(i - 1) }
      { for (i = 1; i <= NF; i++) if ($i == "rankcpu") c += $(i + 1) + $(i + 2) }
      END { printf "round %d nf %d: %s MiB, %.2f CPU-s, %.3f CPU-ms/MiB, load %s\n", r, nf, m, c, 1000*c/m, load }' $raw
  done
done
$G lab down --name $LAB
