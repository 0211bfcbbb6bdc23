#!/usr/bin/env bash
# cpu24: one line per run of ab.sh (from its tables): run variant load busbw jobCPU lan_ms/MB lan_us/dgram wan_us/dgram wanjob_us/dgram
cd "${OUT:-/tmp/cpu24/lab}"
for d in $(ls -d [0-9]*.* | grep -v log | sort -n); do
  t=$d/table.md; [[ -f $t ]] || continue
  row=$(grep "^| 16M" $t)
  bw=$(echo "$row" | awk -F'|' '{gsub(/ /,"",$5); print $5}')
  cpu=$(echo "$row" | awk -F'|' '{gsub(/ /,"",$6); print $6}')
  load=$(grep -o "load average [0-9.]*" $t | head -1 | awk '{print $3}')
  lan=$(grep "within a site" $t | sed -E 's/.*: ([0-9.]+) MiB; ranks ([0-9.]+) CPU-ms\/MB; per DATA datagram \(([0-9]+)\).*/\1 \2 \3/')
  read -r lmib lms lpk <<<"$lan"
  lus=$(awk -v m=$lmib -v c=$lms -v p=$lpk 'BEGIN{printf "%.2f", c*m*1.048576*1000/p}')
  wan=$(grep "^- the floor" $t | sed -E 's/.*WAN connection.s ranks ([0-9.]+) and.*/\1/')
  wj=$(grep "as a job rank" $t | sed -E 's/.*; ranks ([0-9.]+) CPU-us per DATA datagram.*/\1/')
  echo "$d load=$load busbw=$bw jobCPU=$cpu lan=${lms}ms/MB lan_us/dg=$lus wan_us/dg=$wan wanjob_us/dg=$wj"
done
