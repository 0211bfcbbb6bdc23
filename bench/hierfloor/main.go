// Command hierfloor is the floor under the hierarchical AllReduce's
// traffic in issue 14's two-site lab (bench/hier_floor.sh runs it): one
// process a rank moves exactly the bytes a call of the hierarchical
// AllReduce moves at that rank (Plan), phase by phase, with bare UDP and
// nothing else: no protocol, no acknowledgements, no retransmission. What
// the 8 ranks, the kernel and the lab's delay daemons then spend per call,
// and the time a call takes, is what any transport on this machine needs
// at least for that traffic.
//
//	hierfloor -rank R -hosts 10.1.0.11,10.1.0.12,10.2.0.11,10.2.0.12 -size 16777216 \
//	    -calls 10 -warmup 2 -start UNIXMS [-gso] [-wanrate 25e6] [-lanrate 0] [-sports P1,P2,P3,P4] [-only mem,lan,wan]
//
// The memory phases are done in the rank's own memory (a copy of S/2 into
// a second buffer standing for the shared segment and the float32 sum of
// S/2, then two copies of S/2 for the all-gather): the CPU and memory
// traffic of a shared-memory step, without the two ranks' coordination.
// The network phases send the rank's shard (Bytes) to its peer and wait
// until the peer's has come (summed into the buffer with collective/reduce's
// float32 kernel, or copied), each datagram 8972 bytes (MTU 9000) with a
// 16-byte header (call, phase, offset): with -gso as GSO trains of 7
// datagrams read with GRO, else as single datagrams (sendmmsg batches,
// GRO off). The WAN phase goes over -paths sockets (source ports -sports,
// picked onto distinct WAN paths by the script) to as many consecutive
// ports of the peer, paced at -wanrate bytes/s for the pair; the LAN phase
// over one socket, paced at -lanrate (0: as fast as the socket takes it).
// Paced, a sender goes ahead by up to 7 datagrams' bytes (a train, or 7
// single datagrams in one sendmmsg) and then sleeps until they are due,
// so that single datagrams pay no more wake-ups than trains.
// All ranks start their first call at -start (Unix ms, one clock: the
// lab's namespaces share the host's). A phase whose bytes have not all
// come within -timeout is a loss: the rank prints it and exits 1.
//
// Output: rank 0 prints the plan (each phase's bytes); every rank prints
// one line: the mean and largest time of its timed calls, the CPU-seconds
// (getrusage, all threads) of the timed calls in all and per kind of
// phase (the process's CPU over the wall time of its phases of that
// kind), the wall milliseconds a call per kind, and bad datagrams.
package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// opts are the command's flags.
type opts struct {
	rank, size, calls, warmup, paths, port, rbuf, pieces int
	lanTrain, wanTrain                                   int
	hosts, sports, only                                  string
	gso                                                  bool
	wanRate, lanRate                                     float64
	start                                                int64
	timeout, rxWait                                      time.Duration
}

func main() {
	var o opts
	flag.IntVar(&o.rank, "rank", 0, "this rank, 0 to 7")
	flag.StringVar(&o.hosts, "hosts", "", "the 4 hosts' IPv4 addresses, comma-separated: site 1's two, then site 2's")
	flag.IntVar(&o.size, "size", 16<<20, "the AllReduce's bytes (float32)")
	flag.IntVar(&o.calls, "calls", 10, "timed calls")
	flag.IntVar(&o.warmup, "warmup", 2, "calls before the timed ones")
	flag.IntVar(&o.pieces, "pieces", 8, "pieces a call is cut in, pipelined through the phases (1: phase after phase)")
	flag.IntVar(&o.paths, "paths", 4, "WAN sockets (paths), 1 to 8")
	flag.IntVar(&o.port, "port", 7100, "base port: LAN at port+10*local rank, WAN at port+100+10*local rank+path")
	flag.IntVar(&o.rbuf, "rbuf", 32<<20, "socket buffer bytes")
	flag.StringVar(&o.sports, "sports", "", "WAN source ports, one a path (default: any)")
	flag.StringVar(&o.only, "only", "mem,lan,wan", "kinds of phases to run (the others are skipped by every rank)")
	flag.BoolVar(&o.gso, "gso", false, "send GSO trains and read with GRO (default: single datagrams, GRO off)")
	flag.IntVar(&o.lanTrain, "lantrain", 0, "with -gso, datagrams a LAN train, 1 to 7 (0: 7)")
	flag.IntVar(&o.wanTrain, "wantrain", 0, "with -gso, datagrams a WAN train, 1 to 7 (0: 7)")
	flag.Float64Var(&o.wanRate, "wanrate", 25e6, "WAN pacing, bytes/s for the rank pair over all its paths")
	flag.Float64Var(&o.lanRate, "lanrate", 0, "LAN pacing, bytes/s (0: unpaced)")
	flag.Int64Var(&o.start, "start", 0, "Unix ms at which the first call starts (0: now)")
	flag.DurationVar(&o.rxWait, "rxwait", 0, "read all sockets in one goroutine, sleeping this long after the first arrival (0: a reader a socket, woken by Go's poller)")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Second, "the longest wait for a phase's bytes")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "hierfloor rank %d: %v\n", o.rank, err)
		os.Exit(1)
	}
}

// rankAddrs returns the IPv4 address of each rank's host.
func rankAddrs(hosts string) ([]netip.Addr, error) {
	hs := strings.Split(hosts, ",")
	if len(hs) != World/RanksPerHost {
		return nil, fmt.Errorf("-hosts: want %d addresses, got %q", World/RanksPerHost, hosts)
	}
	out := make([]netip.Addr, World)
	for r := range out {
		a, err := netip.ParseAddr(hs[r/RanksPerHost])
		if err != nil || !a.Is4() {
			return nil, fmt.Errorf("-hosts: %q is not an IPv4 address", hs[r/RanksPerHost])
		}
		out[r] = a
	}
	return out, nil
}

// parsePorts reads n comma-separated ports ("" : n zeros, any port).
func parsePorts(s string, n int) ([]uint16, error) {
	out := make([]uint16, n)
	if s == "" {
		return out, nil
	}
	ps := strings.Split(s, ",")
	if len(ps) != n {
		return nil, fmt.Errorf("-sports has %d ports for %d paths", len(ps), n)
	}
	for i, p := range ps {
		v, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("-sports: %w", err)
		}
		out[i] = uint16(v)
	}
	return out, nil
}

// rank is one process's state.
type rank struct {
	o      opts
	phases []Phase
	in     *inbox
	out    map[int]*outlet // by network phase
	buf    []byte          // the rank's buffer (S)
	shm    []byte          // stands for the host's shared segment (S/2)
	peer   []byte          // stands for the host peer's data in it (S/2)
	sum    reduce.Kernel
	closed []*udpio.Socket
	late   time.Duration // how long after -start the rank was ready
	poller *udpio.Poller // -rxwait's
}

func run(o opts) error {
	if o.rank < 0 || o.rank >= World || o.calls < 1 || o.warmup < 0 || o.calls+o.warmup > 1000 ||
		o.paths < 1 || o.paths > 8 || o.pieces < 1 || o.pieces > 64 || o.port < 1 || o.port+200 > 65535 || o.rbuf < 1<<16 || o.rbuf > udpio.MaxSocketBuffer ||
		o.wanRate < 0 || o.lanRate < 0 || o.timeout <= 0 || o.rxWait < 0 || o.rxWait > time.Second || o.size > 1<<30 {
		return fmt.Errorf("bad -rank, -calls, -warmup, -paths, -pieces, -port, -rbuf, -size, -timeout or a rate")
	}
	if o.lanTrain < 0 || o.lanTrain > trainLen || o.wanTrain < 0 || o.wanTrain > trainLen {
		return fmt.Errorf("bad -lantrain or -wantrain: 0 to %d", trainLen)
	}
	phases, err := Plan(o.rank, o.size)
	if err != nil {
		return err
	}
	r, err := newRank(o, phases)
	if err != nil {
		return err
	}
	defer r.close()
	if o.rank == 0 {
		for i, p := range phases {
			fmt.Printf("hierfloor plan phase=%d name=%s kind=%s bytes=%d sum=%v\n", i, p.Name, p.Kind, p.Bytes, p.Sum)
		}
	}
	if o.start > 0 {
		d := time.Until(time.UnixMilli(o.start))
		r.late = max(-d, 0) // started after the others may have sent to us
		time.Sleep(d)
	}
	return r.calls()
}

// runs reports whether phases of kind k run (-only).
func (r *rank) runs(k string) bool {
	for _, s := range strings.Split(r.o.only, ",") {
		if s == k {
			return true
		}
	}
	return false
}

// calls runs the warm-up and timed calls and prints the rank's line.
func (r *rank) calls() error {
	cpu, wall := map[string]float64{}, map[string]time.Duration{}
	var total, worst time.Duration
	var cpu0 float64
	for c := 0; c < r.o.warmup+r.o.calls; c++ {
		timed := c >= r.o.warmup
		if c == r.o.warmup {
			cpu0 = cpuSeconds()
		}
		t0 := time.Now()
		if err := r.call(c, func(kind string, d time.Duration, cs float64) {
			if timed {
				cpu[kind] += cs
				wall[kind] += d
			}
		}); err != nil {
			return err
		}
		if d := time.Since(t0); timed {
			total += d
			worst = max(worst, d)
		}
	}
	n := float64(r.o.calls)
	mode := "plain"
	if r.o.gso {
		mode = fmt.Sprintf("gso(lan %d, wan %d)", r.o.trainOf(KindLAN), r.o.trainOf(KindWAN))
	}
	if r.o.rxWait > 0 {
		mode += "+rxwait" + r.o.rxWait.String()
	}
	fmt.Printf("hierfloor rank=%d mode=%s only=%s pieces=%d size=%d calls=%d call_ms=%.2f call_ms_max=%.2f cpu_s_call=%.4f",
		r.o.rank, mode, r.o.only, r.o.pieces, r.o.size, r.o.calls, total.Seconds()*1e3/n, worst.Seconds()*1e3, (cpuSeconds()-cpu0)/n)
	if r.o.pieces == 1 { // phases one after another: each kind's CPU is the process's over its phases
		for _, k := range []string{KindMem, KindLAN, KindWAN} {
			fmt.Printf(" %s_cpu_s_call=%.4f %s_ms_call=%.2f", k, cpu[k]/n, k, wall[k].Seconds()*1e3/n)
		}
	}
	fmt.Printf(" bad=%d refused=%d late_ms=%d\n", r.in.bad.Load(), r.in.refused.Load(), r.late.Milliseconds())
	return nil
}

// trainOf is the datagrams a train of a link of kind (KindLAN or KindWAN):
// 1 without -gso, else -lantrain or -wantrain, trainLen where unset.
func (o *opts) trainOf(kind string) int {
	n := o.wanTrain
	if kind == KindLAN {
		n = o.lanTrain
	}
	switch {
	case !o.gso:
		return 1
	case n == 0:
		return trainLen
	}
	return n
}
