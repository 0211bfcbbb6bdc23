package mrtransport

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gocoll/gocoll/transport/metaroce/udpio"
	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// jumboPair is two network namespaces, h3-a (10.203.0.1) and h3-b
// (10.203.0.2) (jumboNS), joined by a veth pair of MTU 9000. It needs root.
type jumboPair struct {
	t     testing.TB
	addrs [2]netip.Addr // each rank's ListenAddr
}

// jumboNS are the namespaces' names, h3-a and h3-b with this process's id,
// so that two runs of the tests at once do not share them.
var jumboNS = [2]string{fmt.Sprintf("h3-a-%d", os.Getpid()), fmt.Sprintf("h3-b-%d", os.Getpid())}

func newJumboPair(t *testing.T) *jumboPair {
	t.Helper()
	p := newNSPair(t)
	p.addrs = [2]netip.Addr{netip.MustParseAddr("10.203.0.1"), netip.MustParseAddr("10.203.0.2")}
	p.ip("link", "add", "h3va", "mtu", "9000", "netns", jumboNS[0], "type", "veth", "peer", "name", "h3vb", "mtu", "9000", "netns", jumboNS[1])
	for i, ns := range jumboNS {
		dev := []string{"h3va", "h3vb"}[i]
		p.ip("-n", ns, "addr", "add", fmt.Sprintf("10.203.0.%d/24", i+1), "dev", dev)
		p.ip("-n", ns, "link", "set", dev, "up")
	}
	return p
}

// newNSPair makes the two namespaces, empty but for lo.
func newNSPair(t testing.TB) *jumboPair {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs the ip command (iproute2) to create network namespaces")
	}
	p := &jumboPair{t: t}
	p.teardown()         // left by a killed run of this pid
	removeStaleJumboNS() // and by killed runs of others
	t.Cleanup(p.teardown)
	if out, err := exec.Command("ip", "netns", "add", jumboNS[0]).CombinedOutput(); err != nil {
		t.Skipf("this machine cannot create network namespaces: %v: %s", err, out)
	}
	p.ip("netns", "add", jumboNS[1])
	for _, ns := range jumboNS {
		p.ip("-n", ns, "link", "set", "lo", "up")
	}
	return p
}

func (p *jumboPair) ip(args ...string) {
	p.t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	require.NoError(p.t, err, "ip %s: %s", strings.Join(args, " "), out)
}

// removeStaleJumboNS deletes the h3-a-PID and h3-b-PID namespaces of test
// processes that are gone (killed before their cleanup ran), which would
// otherwise stay on the machine.
func removeStaleJumboNS() {
	names, err := os.ReadDir("/run/netns")
	if err != nil {
		return
	}
	for _, n := range names {
		var side byte
		var pid int
		if k, err := fmt.Sscanf(n.Name(), "h3-%c-%d", &side, &pid); err != nil || k != 2 || (side != 'a' && side != 'b') || fmt.Sprintf("h3-%c-%d", side, pid) != n.Name() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			_ = exec.Command("ip", "netns", "del", n.Name()).Run()
		}
	}
}

func (p *jumboPair) teardown() {
	for _, ns := range jumboNS {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
}

// world connects rank i in namespace jumboNS[i], with cfg, and returns the
// endpoints. Each rank listens and connects on an OS thread moved into its
// namespace, so that its sockets, interface list and route look-ups are
// the namespace's; the thread ends with its goroutine.
func (p *jumboPair) world(ctx context.Context, cfg Config) []*Endpoint {
	p.t.Helper()
	return p.worldEach(ctx, [2]Config{cfg, cfg})
}

// worldEach is world with rank i configured by cfgs[i].
func (p *jumboPair) worldEach(ctx context.Context, cfgs [2]Config) []*Endpoint {
	p.t.Helper()
	eps, err := p.tryWorld(ctx, cfgs)
	require.NoError(p.t, err)
	return eps
}

// tryWorld is worldEach returning the error of a rank that did not
// connect.
func (p *jumboPair) tryWorld(ctx context.Context, cfgs [2]Config) ([]*Endpoint, error) {
	addrs := make([]chan PeerAddr, 2)
	all := make(chan []PeerAddr, 2)
	type result struct {
		ep  *Endpoint
		err error
	}
	done := make([]chan result, 2)
	for i := range 2 {
		addrs[i], done[i] = make(chan PeerAddr, 1), make(chan result, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
			ep, err := func() (*Endpoint, error) {
				if err := enterNS(jumboNS[i]); err != nil {
					return nil, err
				}
				c := cfgs[i]
				c.Rank, c.Size = i, 2
				// Sockets opened later (a re-picked port) are opened in the
				// namespace too.
				c.OpenSocket = func(path int, addr netip.AddrPort) (PathSocket, error) {
					uc := udpio.Config{ReadBuffer: DefaultSocketBuffer, WriteBuffer: DefaultSocketBuffer, BatchSize: DefaultBatch}
					if n := len(c.Interfaces); n > 0 && !isAddr(c.Interfaces[path%n]) {
						uc.Device = c.Interfaces[path%n] // as the default opener does
					}
					type opened struct {
						s   PathSocket
						err error
					}
					ch := make(chan opened, 1)
					go func() {
						runtime.LockOSThread() // never unlocked, as above
						if err := enterNS(jumboNS[i]); err != nil {
							ch <- opened{nil, err}
							return
						}
						s, err := OpenUDPIO(addr, uc)
						ch <- opened{s, err}
					}()
					o := <-ch
					return o.s, o.err
				}
				c.ListenAddr = netip.AddrPortFrom(p.addrs[i], 0)
				l, err := Listen(ctx, c)
				if err != nil {
					addrs[i] <- PeerAddr{}
					return nil, err
				}
				addrs[i] <- l.Addr()
				peers := <-all
				ep, err := l.Connect(ctx, peers)
				if err != nil {
					_ = l.Close()
				}
				return ep, err
			}()
			done[i] <- result{ep, err}
		}()
	}
	peers := []PeerAddr{<-addrs[0], <-addrs[1]}
	all <- peers
	all <- peers
	eps := make([]*Endpoint, 2)
	var errs []error
	for i := range 2 {
		r := <-done[i]
		if r.err != nil {
			errs = append(errs, fmt.Errorf("rank %d: %w", i, r.err))
			continue
		}
		eps[i] = r.ep
		p.t.Cleanup(func() { _ = r.ep.Close() })
	}
	if err := errors.Join(errs...); err != nil {
		for _, ep := range eps {
			if ep != nil {
				_ = ep.Close()
			}
		}
		return nil, err
	}
	return eps, nil
}

// enterNS moves the calling OS thread (locked) into network namespace ns.
func enterNS(ns string) error {
	fd, err := unix.Open("/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Setns(fd, unix.CLONE_NEWNET)
}

// payloadPerPacket is the mean DATA payload ep sent to its peer per
// packet, over all paths.
func payloadPerPacket(ep *Endpoint) (int64, int64) {
	var bytes, packets int64
	for _, ps := range ep.Stats().Peers {
		for _, pa := range ps.Paths {
			bytes, packets = bytes+pa.BytesSent, packets+pa.PacketsSent
		}
	}
	if packets == 0 {
		return 0, 0
	}
	return bytes / packets, packets
}

// TestJumboMTUDatagrams runs AllReduces across a veth of MTU 9000: the
// endpoints offer 8972-byte datagrams (9000 less IPv4 and UDP headers) and
// their DATA carries about 8.9 KB per packet; then, with a route of MTU
// 4000 from h3-a to h3-b, the connection h3-a dials keeps to 3972 bytes
// both ways.
func TestJumboMTUDatagrams(t *testing.T) {
	p := newJumboPair(t)
	ctx := testCtx(t)
	eps := p.world(ctx, Config{Paths: 2})
	for _, ep := range eps {
		require.Equal(t, 8972, ep.cfg.MaxDatagram, "offered datagram, rank %d", ep.Rank())
	}
	allReduceSum(t, newComms(t, eps), 1<<20)
	for _, ep := range eps {
		per, packets := payloadPerPacket(ep)
		t.Logf("rank %d: %d DATA packets, %d payload bytes each on average", ep.Rank(), packets, per)
		// Full pieces fill the datagram (Config.AckRoom off by default).
		require.Greater(t, per, int64(8972-wire.DataOverhead-96), "rank %d sends small datagrams", ep.Rank())
		require.LessOrEqual(t, per, int64(8972-wire.DataOverhead))
	}
	for _, ep := range eps {
		require.NoError(t, ep.Close())
	}

	p.ip("-n", jumboNS[0], "route", "add", "10.203.0.2/32", "dev", "h3va", "mtu", "4000")
	eps = p.world(ctx, Config{Paths: 2})
	require.Equal(t, 3972, eps[0].peers[1].maxDatagram, "limit of the connection rank 0 dialed")
	allReduceSum(t, newComms(t, eps), 1<<20)
	for _, ep := range eps {
		per, packets := payloadPerPacket(ep)
		t.Logf("rank %d with a 4000-byte route: %d DATA packets, %d payload bytes each on average", ep.Rank(), packets, per)
		require.Greater(t, per, int64(3800), "rank %d", ep.Rank())
		require.LessOrEqual(t, per, int64(3972-wire.DataOverhead), "rank %d sends datagrams above the route's MTU", ep.Rank())
	}
}
