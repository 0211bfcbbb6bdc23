// Command udpfloor is the floor under MetaRoCE's CPU per datagram: a
// sender that blasts UDP datagrams at a fixed rate over -paths sockets
// (one source port each, as MetaRoCE's paths) and a receiver that reads
// them, with nothing else: no protocol, no ACKs, no retransmission. What
// the two processes, the kernel and the lab's delay daemons spend per
// datagram then is what any UDP transport pays at that size and rate on
// this machine; bench/cpu_lab.sh sets it against one MetaRoCE connection.
//
//	udpfloor -recv -listen 10.2.0.11:7000 -paths 4 -time 8s
//	udpfloor -send -to 10.2.0.11:7000 -paths 4 -rate 90e6 -size 8972 -time 8s [-sports 40001,40004,...] [-tick 100us]
//	udpfloor -recv -listen 10.2.0.11:7000 -paths 4 -time 8s -batchwait 1ms
//
// The receiver listens on -paths consecutive ports from -listen's and reads
// each with batched recvmmsg (udpio.Socket.ReadBatch, one goroutine per
// socket) for -time plus 2 s. The sender keeps a token bucket of -rate
// bytes/s: every -tick (default 1 ms, by time.Sleep, an idle Go timer's
// resolution; a shorter -tick sleeps in nanosleep) it sends the datagrams
// due, round robin over its sockets to the matching ports, each with its
// own sendmmsg (as MetaRoCE sends a datagram per path per batch), for
// -time; -sports binds its sockets to those source ports (bench/cpu_lab.sh
// picks ports that the lab's ECMP hash puts on distinct WAN paths, as
// MetaRoCE's re-picks do). Each prints one line: the datagrams and bytes
// it moved, the seconds, its CPU-seconds (user and system, getrusage), its
// CPU-us per datagram and its context switches (getrusage's voluntary and
// involuntary, all its threads).
//
// The tick shapes the arrivals: the lab's links (tbf, 25 KB bursts) pass
// a 1 ms tick's datagrams as bursts, which the receiver reads a few per
// wake-up, while a 100 us tick spreads them as MetaRoCE's pacing does
// (about one wake-up per datagram: bench/results/cpu_lab/wake24.md).
// -batchwait D (Linux) reads instead with the sockets kept out of Go's
// poller, every socket once per D, for what a wake-up per arrival costs.
package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

func main() {
	recv := flag.Bool("recv", false, "receive")
	send := flag.Bool("send", false, "send")
	listen := flag.String("listen", "", "receiver: first address to listen on")
	to := flag.String("to", "", "sender: the receiver's first address")
	paths := flag.Int("paths", 4, "sockets (consecutive ports at the receiver), 1 to 64")
	rate := flag.Float64("rate", 90e6, "sender: bytes/s")
	size := flag.Int("size", 8972, "sender: datagram bytes, 1 to 65507")
	dur := flag.Duration("time", 8*time.Second, "how long to send (the receiver reads 2 s more)")
	sports := flag.String("sports", "", "sender: comma-separated source ports, one per socket (default: any)")
	tick := flag.Duration("tick", time.Millisecond, "sender: how often it sends the datagrams due (below 1ms: by nanosleep, finer than an idle Go timer)")
	batchWait := flag.Duration("batchwait", 0, "receiver: read every socket once per this wait, the sockets outside Go's poller (Linux; 0: a goroutine per socket, woken by the poller)")
	flag.Parse()
	err := rusageSupported()
	switch {
	case err != nil:
	case *paths < 1 || *paths > 64 || *size < 1 || *size > 65507 || *rate <= 0 || *dur <= 0 || *dur > time.Hour || *tick <= 0 || *tick > time.Second:
		err = fmt.Errorf("bad -paths, -size, -rate -time or -tick")
	case *recv && !*send && *batchWait > 0:
		err = receiveBatched(*listen, *paths, *dur+2*time.Second, *batchWait)
	case *recv && !*send:
		err = receive(*listen, *paths, *dur+2*time.Second)
	case *send && !*recv:
		err = blast(*to, *sports, *paths, *rate, *size, *dur, *tick)
	default:
		err = fmt.Errorf("give one of -recv and -send")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "udpfloor:", err)
		os.Exit(1)
	}
}

// portAt returns a with its port moved on by i.
func portAt(a netip.AddrPort, i int) (netip.AddrPort, error) {
	p := int(a.Port()) + i
	if a.Port() == 0 || p > 65535 {
		return a, fmt.Errorf("port %d + %d out of range", a.Port(), i)
	}
	return netip.AddrPortFrom(a.Addr(), uint16(p)), nil
}

func receive(listen string, paths int, dur time.Duration) error {
	base, err := netip.ParseAddrPort(listen)
	if err != nil {
		return err
	}
	socks := make([]*udpio.Socket, paths)
	for i := range socks {
		a, err := portAt(base, i)
		if err != nil {
			return err
		}
		if socks[i], err = udpio.Listen(a, udpio.Config{}); err != nil {
			return err
		}
		defer socks[i].Close()
	}
	start := time.Now()
	var n, bytes atomic.Int64
	var wg sync.WaitGroup
	for _, s := range socks {
		if err := s.SetReadDeadline(start.Add(dur)); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms := make([]udpio.Message, 16)
			for i := range ms {
				ms[i].Buf = make([]byte, udpio.ReadBufferSize)
			}
			for {
				k, err := s.ReadBatch(ms)
				if err != nil {
					return // the deadline
				}
				for _, m := range ms[:k] {
					n.Add(1)
					bytes.Add(int64(m.N))
				}
			}
		}()
	}
	wg.Wait()
	report("recv", n.Load(), bytes.Load(), time.Since(start))
	return nil
}

func blast(to, sports string, paths int, rate float64, size int, dur, tick time.Duration) error {
	base, err := netip.ParseAddrPort(to)
	if err != nil {
		return err
	}
	src := make([]uint16, paths)
	if sports != "" {
		ps := strings.Split(sports, ",")
		if len(ps) != paths {
			return fmt.Errorf("-sports has %d ports for %d paths", len(ps), paths)
		}
		for i, p := range ps {
			v, err := strconv.ParseUint(p, 10, 16)
			if err != nil {
				return fmt.Errorf("-sports: %w", err)
			}
			src[i] = uint16(v)
		}
	}
	socks := make([]*udpio.Socket, paths)
	dsts := make([]netip.AddrPort, paths)
	for i := range socks {
		if dsts[i], err = portAt(base, i); err != nil {
			return err
		}
		if socks[i], err = udpio.Listen(netip.AddrPortFrom(netip.IPv4Unspecified(), src[i]), udpio.Config{}); err != nil {
			return err
		}
		defer socks[i].Close()
	}
	buf := make([]byte, size)
	start := time.Now()
	var n, bytes int64
	for next := 0; ; {
		el := time.Since(start)
		if el >= dur {
			break
		}
		due := int64(el.Seconds()*rate) / int64(size)
		for ; n < due; n++ {
			i := next % paths
			next++
			if _, err := socks[i].WriteBatch([]udpio.Message{{Buf: buf, Addr: dsts[i]}}); err == nil {
				bytes += int64(size)
			}
		}
		if tick < time.Millisecond {
			nap(tick)
		} else {
			time.Sleep(tick)
		}
	}
	report("send", n, bytes, time.Since(start))
	return nil
}

// report prints one side's line.
func report(side string, n, bytes int64, el time.Duration) {
	usr, sys := cpuSeconds()
	per := 0.0
	if n > 0 {
		per = (usr + sys) / float64(n) * 1e6
	}
	vol, invol := switches()
	fmt.Printf("udpfloor %s datagrams=%d bytes=%d seconds=%.3f user=%.3f sys=%.3f cpu_us_per_datagram=%.2f vcsw=%d ivcsw=%d\n",
		side, n, bytes, el.Seconds(), usr, sys, per, vol, invol)
}
