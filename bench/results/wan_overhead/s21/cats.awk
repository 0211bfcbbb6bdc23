# Reads perf script output (samples separated by blank lines); counts samples whose stack contains each category's pattern (first match in priority order = exclusive categories).
BEGIN {
  nc = split("sched:runtime.findRunnable|runtime.mcall|runtime.park_m|runtime.schedule,spin:spinwait.UntilFunc|spinRead,timer:engine).onTimer|timerLoop,rx-core:HandleDatagram,tx-write:engine).write|sendmmsg,rx-read:recvmmsg|reader).each|ReadBatch,tx-poll:engine).poll|PollTransmit,engine-other:mrtransport,gc:gcBgMarkWorker|gcDrain|mallocgc,shm:transport/shm,reduce:collective/reduce,bench:gocoll/bench,collective:gocoll/collective", cats, ",")
}
function flush() {
  if (stack == "") return
  tot++
  for (i = 1; i <= nc; i++) { split(cats[i], kv, ":"); if (stack ~ kv[2]) { c[kv[1]]++; stack=""; return } }
  c["other"]++; 
  if (top != "") o[top]++
  stack = ""
}
/^[^ \t]/ { flush(); top=""; next }
/^$/ { flush(); next }
{ if (top == "") top = $2; stack = stack " " $2 }
END { flush(); for (k in c) printf "%-14s %6d %5.1f%%\n", k, c[k], 100*c[k]/tot | "sort -k2 -nr"; close("sort -k2 -nr"); print "total", tot; for (k in o) if (o[k] > tot/200) printf "  other top: %s %d\n", k, o[k] }
