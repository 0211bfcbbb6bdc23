#!/usr/bin/env bash
# bpflab.sh LAB DELAY_NS: in lab LAB (up with --delay 0), delay each WAN egress by DELAY_NS with a tc BPF program setting the departure time and fq (one FIFO flow per band: orphan_mask 0) as the tbf's child, limit = the link's txqueuelen + the packets of the delay line
set -e
lab=$1 d=$2
unshare -m bash -c '
mount -t bpf none /tmp/gap32bpf
python3 /tmp/gap32tools/bpfdelay.py /tmp/gap32bpf/d '$d' >/dev/null
for r in '$lab'-s1r '$lab'-s2r; do
  for dev in $(ip netns exec $r ls /sys/class/net | grep "^s[0-9]p[0-9]"); do
    q=$(ip netns exec $r cat /sys/class/net/$dev/tx_queue_len)
    lim=$((q * 11 / 10 + 10))
    ip netns exec $r tc qdisc del dev $dev parent 1:1
    ip netns exec $r tc qdisc add dev $dev parent 1:1 handle 20: fq limit $lim flow_limit $lim orphan_mask 0 nopacing
    ip netns exec $r tc qdisc add dev $dev clsact
    ip netns exec $r tc filter add dev $dev egress bpf da object-pinned /tmp/gap32bpf/d
  done
done'
