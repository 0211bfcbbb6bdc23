// Command hostile sprays a running gocoll job with hostile traffic for
// bench/soak_hostile.sh (issue 16 item 4): random, truncated, replayed and
// forged UDP datagrams at every port of a range (MetaRoCE's path sockets
// under GOCOLL_UDP_PORTS), and TCP connections that send garbage or
// nothing at the addresses given. Replayed and forged datagrams are copies
// of the job's own, captured on the loopback interface (AF_PACKET: root
// on Linux); without it, only random and truncated-random datagrams go.
// At the end it prints one line of counts.
//
//	hostile -ports 47000-47199 -tcp 127.0.0.1:29500 -for 60s
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	ports := flag.String("ports", "", "UDP port range lo-hi to spray (required)")
	tcpAddrs := flag.String("tcp", "", "comma-separated TCP host:port to flood with connections")
	dur := flag.Duration("for", time.Minute, "how long")
	rate := flag.Int("rate", 20000, "datagrams per second, at most")
	flag.Parse()
	lo, hi, err := parseRange(*ports)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(2)
	}
	end := time.Now().Add(*dur)
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
	defer conn.Close()
	cap := newCapture(lo, hi, conn.LocalAddr().(*net.UDPAddr).Port)
	var st stats
	var wg sync.WaitGroup
	for _, a := range strings.Split(*tcpAddrs, ",") {
		if a != "" {
			wg.Go(func() { floodTCP(a, end, &st) })
		}
	}
	wg.Go(func() { sprayUDP(conn, lo, hi, *rate, end, cap, &st) })
	wg.Wait()
	fmt.Printf("hostile: captured %d, sent random %d truncated %d replayed %d forged %d datagrams (%d send errors); tcp connections %d (%d refused)\n",
		cap.count(), st.random.Load(), st.truncated.Load(), st.replayed.Load(), st.forged.Load(), st.sendErr.Load(),
		st.tcpConns.Load(), st.tcpRefused.Load())
}

type stats struct {
	random, truncated, replayed, forged, sendErr atomic.Int64
	tcpConns, tcpRefused                         atomic.Int64
}

func parseRange(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("-ports %q: want lo-hi", s)
	}
	return lo, hi, nil
}

// sprayUDP sends a mix of hostile datagrams at random ports of [lo, hi].
func sprayUDP(conn *net.UDPConn, lo, hi, rate int, end time.Time, cap *capture, st *stats) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 16))
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	perTick := max(rate/1000, 1)
	for time.Now().Before(end) {
		<-tick.C
		for range perTick {
			var b []byte
			var port int
			var kind *atomic.Int64
			d, dport, ok := cap.pick(rng)
			switch k := rng.IntN(4); {
			case k == 0 || !ok:
				b = make([]byte, 1+rng.IntN(1500))
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				if rng.IntN(2) == 0 {
					b[0] = 2 // MetaRoCE's version byte: parsed further
				}
				port, kind = lo+rng.IntN(hi-lo+1), &st.random
			case k == 1:
				b, port, kind = d[:rng.IntN(len(d))], dport, &st.truncated
			case k == 2:
				b, port, kind = d, dport, &st.replayed
			default:
				b = append([]byte(nil), d...)
				for range 1 + rng.IntN(4) {
					b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
				}
				port, kind = dport, &st.forged
			}
			to := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port))
			if _, err := conn.WriteToUDPAddrPort(b, to); err != nil {
				st.sendErr.Add(1)
				continue
			}
			kind.Add(1)
		}
	}
}

// floodTCP opens connections to addr until end: some send garbage, some
// a partial hello, some nothing, each closed after a moment; at most 64
// are open at once.
func floodTCP(addr string, end time.Time, st *stats) {
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := 0; time.Now().Before(end); i++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				st.tcpRefused.Add(1)
				time.Sleep(10 * time.Millisecond)
				return
			}
			defer c.Close()
			st.tcpConns.Add(1)
			_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
			switch i % 3 {
			case 0:
				b := make([]byte, 1+i%4096)
				for j := range b {
					b[j] = byte(j*31 + i)
				}
				_, _ = c.Write(b)
			case 1:
				_, _ = c.Write([]byte("gocolTCP\x01"))
			}
			var buf [512]byte
			_, _ = c.Read(buf[:])
		})
	}
}
