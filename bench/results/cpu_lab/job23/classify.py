#!/usr/bin/env python3
"""classify.py DIR...: perf script of every perf.* in each DIR; CPU-ms by component (cpu-clock samples, period-weighted)."""
import subprocess, sys, glob, collections, re

# Ordered rules: (component, predicate over (frames leaf-first list of symbols)).
def has(fr, *subs):
    return any(s in f for f in fr for s in subs)
def leaf_has(fr, *subs):
    return any(s in fr[0] for s in subs) if fr else False

RX = ("udp_queue_rcv", "__udp_enqueue_schedule_skb", "udp_rcv", "ip_local_deliver", "sock_def_readable", "udp_unicast_rcv_skb", "__udp4_lib_rcv", "ip_protocol_deliver")
FWD = ("ip_forward", "nf_queue", "nfqnl", "br_handle_frame", "br_forward", "br_dev_xmit", "br_pass_frame", "veth_xmit", "__dev_queue_xmit", "netif_rx", "__netif_receive_skb", "ip_rcv", "nf_hook_slow", "ipt_do_table", "net_rx_action", "process_backlog", "ip_route_input", "fib_validate_source", "ip_sublist_rcv", "ip_list_rcv", "veth_poll", "__napi_poll")
def netleaf(fr):
    for f in fr:
        if any(m in f for m in RX):
            return "rx"
        if any(m in f for m in FWD):
            return "fwd"
    return None

RULES = [
    ("page faults", lambda fr: has(fr, "asm_exc_page_fault", "do_user_addr_fault", "handle_mm_fault")),
    ("sched_yield (spin yields, incl. switches under it)", lambda fr: has(fr, "__x64_sys_sched_yield", "do_sched_yield")),
    ("CMA copies (process_vm_readv/writev)", lambda fr: has(fr, "process_vm_rw", "process_vm_readv", "process_vm_writev")),
    ("net: receive side in the kernel (ip/udp rx, socket enqueue, reader wake-up)", lambda fr: netleaf(fr) == "rx"),
    ("net: lab forwarding (veth, bridge, router netns, netfilter queue)", lambda fr: netleaf(fr) == "fwd"),
    ("kernel UDP send (sendmmsg/sendmsg)", lambda fr: has(fr, "__sys_sendmmsg", "__x64_sys_sendmmsg", "__sys_sendmsg", "__x64_sys_sendto", "__sys_sendto")),
    ("kernel UDP recv (recvmmsg/recvmsg)", lambda fr: has(fr, "__sys_recvmmsg", "__x64_sys_recvmmsg", "__sys_recvmsg", "__x64_sys_recvfrom", "do_recvmmsg")),
    ("epoll_pwait (netpoll)", lambda fr: has(fr, "do_epoll_wait", "__x64_sys_epoll_pwait", "ep_poll")),
    ("futex (Go thread sleep/wake)", lambda fr: has(fr, "__x64_sys_futex", "do_futex")),
    ("nanosleep/usleep (runtime, shm naps)", lambda fr: has(fr, "__x64_sys_nanosleep", "hrtimer_nanosleep", "__x64_sys_clock_nanosleep")),
    ("other syscalls", lambda fr: has(fr, "entry_SYSCALL_64", "do_syscall_64")),
    ("interrupts/softirq (kernel, async)", lambda fr: has(fr, "asm_common_interrupt", "asm_sysvec", "irq_exit_rcu", "__do_softirq", "asm_sysvec_apic_timer_interrupt")),
    ("CRC32C", lambda fr: leaf_has(fr, "crc32", "castagnoli")),
    ("reductions (kernels)", lambda fr: leaf_has(fr, "kernels.", "reduce", "Reduce", "sumF", "addF") and not has(fr, "runtime.gcDrain")),
    ("GC (mark, sweep, assist, alloc)", lambda fr: has(fr, "runtime.gcBgMarkWorker", "runtime.gcDrain", "runtime.gcAssist", "runtime.bgsweep", "runtime.mallocgc", "runtime.bgscavenge", "runtime.markroot", "runtime.scanobject")),
    ("shm copies (user memmove in transport/shm)", lambda fr: leaf_has(fr, "memmove", "memclr") and has(fr, "transport/shm")),
    ("other memmove/memclr", lambda fr: leaf_has(fr, "memmove", "memclr")),
    ("Go scheduler (schedule, findRunnable, park, sysmon)", lambda fr: has(fr, "runtime.schedule", "runtime.findRunnable", "runtime.park_m", "runtime.mcall", "runtime.sysmon", "runtime.goschedImpl", "runtime.gosched_m", "runtime.stopm", "runtime.startm", "runtime.wakep", "runtime.netpoll", "runtime.mstart")),
    ("Go runtime timers/other", lambda fr: fr and fr[0].startswith("runtime.")),
    ("MetaRoCE (mrtransport, wire, udpio, user)", lambda fr: fr and any(s in fr[0] for s in ("metaroce",))),
    ("shm transport (user)", lambda fr: fr and "transport/shm" in fr[0]),
    ("collective (user)", lambda fr: fr and "gocoll/collective" in fr[0]),
    ("spinwait (user)", lambda fr: fr and "spinwait" in fr[0]),
    ("kernel other", lambda fr: fr and fr[0].startswith("[k]")),
]

def samples(path):
    p = subprocess.run(["perf", "script", "-i", path, "-F", "period,ip,sym,dso"], capture_output=True, text=True)
    cur = None; period = 0
    for line in p.stdout.splitlines():
        if not line.strip():
            if cur is not None:
                yield period, cur
            cur = None
            continue
        if cur is None:
            toks = line.split()
            try:
                period = int(toks[0])
            except ValueError:
                period = 1000000
            cur = []
            continue
        toks = line.strip().split(None, 1)
        if len(toks) < 2:
            continue
        rest = toks[1]
        m = re.match(r"(.*) \((.*)\)$", rest)
        sym, dso = (m.group(1), m.group(2)) if m else (rest, "")
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        if "kernel" in dso:
            sym = "[k]" + sym
        cur.append(sym)
    if cur is not None:
        yield period, cur

def classify(fr):
    for name, pred in RULES:
        try:
            if pred(fr):
                return name
        except Exception:
            pass
    return "other"

def main():
    leaves = collections.Counter()
    for d in sys.argv[1:]:
        tot = collections.Counter()
        for f in sorted(glob.glob(d + "/perf.*")):
            for period, fr in samples(f):
                c = classify(fr)
                tot[c] += period / 1e6  # ns -> ms
                if c in ("other", "kernel other", "Go runtime timers/other"):
                    leaves[(c, fr[0] if fr else "?")] += period / 1e6
        for k, v in sorted(tot.items(), key=lambda kv: -kv[1]):
            print(f"{d}\t{k}\t{v:.1f}")
        print(f"{d}\tTOTAL\t{sum(tot.values()):.1f}")
    with open("/tmp/job23/leaves.txt", "w") as w:
        for (c, l), v in leaves.most_common(60):
            print(f"{c}\t{l}\t{v:.1f}", file=w)

if __name__ == "__main__":
    main()
