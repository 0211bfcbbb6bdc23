package mrtransport

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newECMPPair joins h3-a (10.203.9.1) and h3-b (10.203.9.2) by links
// veth links, each shaped to 100 Mbit/s from h3-a (tbf), with a multipath
// route each way that hashes addresses and ports (fib_multipath_hash_policy
// 1), as an ECMP fabric does.
func newECMPPair(t testing.TB, links int) *jumboPair {
	t.Helper()
	p := newNSPair(t)
	p.addrs = [2]netip.Addr{netip.MustParseAddr("10.203.9.1"), netip.MustParseAddr("10.203.9.2")}
	var hops [2][]string
	for l := 1; l <= links; l++ {
		a, b := fmt.Sprintf("h3a%d", l), fmt.Sprintf("h3b%d", l)
		p.ip("link", "add", a, "netns", jumboNS[0], "type", "veth", "peer", "name", b, "netns", jumboNS[1])
		for i, dev := range []string{a, b} {
			p.ip("-n", jumboNS[i], "addr", "add", fmt.Sprintf("10.203.%d.%d/30", l, i+1), "dev", dev)
			p.ip("-n", jumboNS[i], "link", "set", dev, "up")
			hops[i] = append(hops[i], "nexthop", "via", fmt.Sprintf("10.203.%d.%d", l, 2-i), "dev", dev)
		}
		p.run("ip", "netns", "exec", jumboNS[0], "tc", "qdisc", "add", "dev", a, "root", "tbf", "rate", "100mbit", "burst", "32kb", "latency", "20ms")
	}
	for i, ns := range jumboNS {
		p.ip("-n", ns, "addr", "add", p.addrs[i].String()+"/32", "dev", "lo")
		p.ip(append([]string{"-n", ns, "route", "add", p.addrs[1-i].String() + "/32"}, hops[i]...)...)
		p.run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy=1",
			"net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")
	}
	return p
}

func (p *jumboPair) run(argv ...string) {
	p.t.Helper()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	require.NoError(p.t, err, "%s: %s", strings.Join(argv, " "), out)
}

// link returns the device h3-a routes a UDP flow from sport to dport on.
func (p *jumboPair) link(sport, dport uint16) string {
	p.t.Helper()
	out, err := exec.Command("ip", "-n", jumboNS[0], "route", "get", p.addrs[1].String(), "from", p.addrs[0].String(),
		"ipproto", "udp", "sport", fmt.Sprint(sport), "dport", fmt.Sprint(dport)).CombinedOutput()
	require.NoError(p.t, err, "%s", out)
	f := strings.Fields(string(out))
	for i := range len(f) - 1 {
		if f[i] == "dev" {
			return f[i+1]
		}
	}
	p.t.Fatalf("no dev in %q", out)
	return ""
}

// txBytes returns the bytes each of h3-a's links has sent.
func (p *jumboPair) txBytes(links int) []int64 {
	p.t.Helper()
	out, err := exec.Command("ip", "-n", jumboNS[0], "-s", "-j", "link", "show").Output()
	require.NoError(p.t, err)
	var devs []struct {
		Name  string `json:"ifname"`
		Stats struct {
			Tx struct {
				Bytes int64 `json:"bytes"`
			} `json:"tx"`
		} `json:"stats64"`
	}
	require.NoError(p.t, json.Unmarshal(out, &devs))
	tx := make([]int64, links)
	for _, l := range devs {
		var n int
		if _, err := fmt.Sscanf(l.Name, "h3a%d", &n); err == nil && n >= 1 && n <= links {
			tx[n-1] = l.Stats.Tx.Bytes
		}
	}
	return tx
}

// TestRepickSpreadsPathsOverECMPLinks sends from h3-a to h3-b over paths
// that the multipath route has hashed so that a link is unused (the world
// is rebuilt until it is): 2 paths on one of 2 links, and 8 paths over 4
// links. The sender sees paths behave as one and re-picks ports until
// every link carries traffic, which the links' byte counters show.
func TestRepickSpreadsPathsOverECMPLinks(t *testing.T) {
	for _, c := range []struct{ links, paths int }{{2, 2}, {4, 8}} {
		t.Run(fmt.Sprintf("%d paths over %d links", c.paths, c.links), func(t *testing.T) {
			if testing.Short() && c.links > 2 {
				// Each move finds the unused link with a chance of 1 in 4;
				// under the race detector on 2 busy cores one run needed
				// more than the 30 s it is given (re-picks judged on noisy
				// samples were undone). The full pass runs it.
				t.Skip("-short: 8 paths over 4 links can take over 30 s to converge under -race")
			}
			testRepickSpreads(t, c.links, c.paths)
		})
	}
}

func testRepickSpreads(t *testing.T, links, paths int) {
	p := newECMPPair(t, links)
	// The traffic runs until the links are all used, up to spreadLimit: its
	// context must outlast that (testCtx's 20 s ended it first under load,
	// and the links then carried only keepalives until the limit).
	ctx, cancel := context.WithTimeout(context.Background(), spreadLimit+testWait)
	defer cancel()
	cfg := Config{Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)), Paths: paths,
		Repick: RepickPolicy{Sample: 30 * time.Millisecond, Window: 8, Interval: 300 * time.Millisecond, MaxInterval: 1200 * time.Millisecond}}
	var eps []*Endpoint
	for try := 0; ; try++ {
		require.Less(t, try, 40, "no world with a link unused")
		eps = p.world(ctx, cfg)
		a, b := eps[0].Addr().Paths, eps[1].Addr().Paths
		used := make(map[string]int)
		for i := range a {
			used[p.link(a[i].Port(), b[i].Port())]++
		}
		if len(used) < links {
			t.Logf("try %d: paths per link %v", try, used)
			break
		}
		for _, ep := range eps {
			require.NoError(t, ep.Close())
		}
	}
	const msg = 4 << 20
	src, dst := make([]byte, msg), make([]byte, msg)
	stop, ended := make(chan struct{}), make(chan struct{})
	var trafficErr error // set before ended closes
	// The traffic's waits end with tctx, cancelled when the test has
	// failed so that it stops at once (ctx would hold a message that
	// cannot finish up to 20 s more); a test that passes lets the message
	// in flight finish and checks it.
	tctx, tcancel := context.WithCancel(ctx)
	defer tcancel()
	go func() {
		defer close(ended)
		for i := uint32(0); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r := eps[1].Recv(0, benchTag(9, i), dst)
			s := eps[0].Send(1, benchTag(9, i), src)
			_, rerr := r.Wait(tctx)
			_, serr := s.Wait(tctx)
			if err := firstErr(rerr, serr); err != nil {
				trafficErr = fmt.Errorf("message %d: %w", i, err)
				return
			}
		}
	}()
	defer func() {
		close(stop)
		if t.Failed() {
			tcancel()
			<-ended
			return
		}
		<-ended
		require.NoError(t, trafficErr)
	}()
	start := time.Now()
	prev := p.txBytes(links)
	spread := 0
	for {
		select {
		case <-ended:
			t.Fatalf("the traffic stopped at %.1f s: %v", time.Since(start).Seconds(), trafficErr)
		default:
		}
		require.Less(t, time.Since(start), spreadLimit, "the links were never all used")
		time.Sleep(500 * time.Millisecond) // a measurement interval, not a synchronisation
		now := p.txBytes(links)
		// A link is used when it carries at least half its even share of
		// the interval's bytes: a share, not a rate, since the rate on 2
		// cores shared with the rest of the suite is anyone's guess (CI
		// once moved 25 Mbit/s a link, evenly spread, and failed on the
		// rate). The total must still be more than keepalives.
		d := make([]int64, links)
		var total int64
		for l := range d {
			d[l] = now[l] - prev[l]
			total += d[l]
		}
		all := total > 500_000
		for l := range d {
			all = all && d[l] >= total/int64(2*links)
		}
		prev = now
		picks, undone := eps[0].Repicks()
		t.Logf("%5.1f s: link bytes %v, re-picks %d (%d undone)", time.Since(start).Seconds(), d, picks, undone)
		if all {
			spread++
		} else {
			spread = 0
		}
		if spread == 4 { // every link used for 2 s
			require.Positive(t, picks)
			return
		}
	}
}

// spreadLimit bounds how long testRepickSpreads waits for every link to
// carry traffic.
const spreadLimit = 30 * time.Second

// testWriter writes log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
