package launcher

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
	"github.com/gocoll/gocoll/transport/route"
	"github.com/gocoll/gocoll/transport/shm"
	"github.com/gocoll/gocoll/transport/tcp"
)

// DefaultTransport is the transport of a job that does not set
// GOCOLL_TRANSPORT: auto, shared memory between the ranks of one host and
// MetaRoCE between hosts (a World's Job names what it picked:
// TransportSHM, TransportMetaRoCE or TransportSHMMetaRoCE). Shared memory
// notices a dead peer at once (its pidfd); MetaRoCE notices a dead process
// from the ICMP port unreachable that its next datagram to it draws (within
// about a second while a receive waits), and a peer that stopped answering
// on every path (a stopped process, a vanished host) at GOCOLL_PEER_TIMEOUT
// (2 s). A pair of hosts between which UDP is blocked talks TCP (see the
// package doc). shm+tcp, the default before MetaRoCE, stays available. Where shared
// memory cannot be set up (on systems other than Linux shm.Supported is
// false), auto and shm+tcp reach the ranks of a host through their network
// transport too; shm alone fails.
const DefaultTransport = TransportAuto

// transportSpec is what every transport needs to set up one rank.
type transportSpec struct {
	Rank     int
	Size     int
	JobID    uint64       // equal on every rank of the job
	Host     string       // IP address to listen on
	HostName string       // this rank's host in the topology
	Logger   *slog.Logger // nil: no logging
	// SpinWait is Job.SpinWait (shared memory and MetaRoCE).
	SpinWait time.Duration
	// PeerTimeout is Job.PeerTimeout (MetaRoCE's core; 0: its default).
	PeerTimeout time.Duration
	// UDPPorts and PathInterfaces are Job's (MetaRoCE's path sockets).
	UDPPorts       mrtransport.PortRange
	PathInterfaces []string
	// ArrivalTimes is Job's (mrtransport.Config.ArrivalTimes).
	ArrivalTimes bool
	// CoalesceWait is Job's (mrtransport.Config.CoalesceWait; -1 off, 0
	// its default).
	CoalesceWait time.Duration
	// SendSamples is Job's (mrtransport.Config.SendSamples; "" off).
	SendSamples string
	// Paths is Job's (mrtransport.Config.Paths; 0: its default).
	Paths int
	// UDPProbe bounds MetaRoCE's first connect (Job.UDPProbeTimeout); see
	// fallback.go.
	UDPProbe time.Duration
	// Exchange gathers every rank's value under name (the store's
	// AllGather); nil: MetaRoCE connects without a probe.
	Exchange func(ctx context.Context, name string, value []byte) ([][]byte, error)
	// Notices receives the lines a rank prints about its transports (a
	// pair that falls back to TCP); nil: none.
	Notices io.Writer
	// OpenSocket, if not nil, opens MetaRoCE's path sockets (tests).
	OpenSocket mrtransport.SocketOpener
	// Auth is how the transports authenticate (auth.go).
	Auth *transportAuth
}

func (spec transportSpec) shmConfig() shm.Config {
	return shm.Config{Rank: spec.Rank, Size: spec.Size, SpinWait: spec.SpinWait, Logger: spec.Logger, Key: spec.Auth.transportKey()}
}

// transportListener is one rank's half-built transport: listening, its
// address known, waiting for every rank's address to connect.
type transportListener interface {
	// Addr is what the other ranks pass to Connect for this rank; opaque.
	Addr() string
	// Connect builds this rank's endpoint; addrs[i] is rank i's Addr.
	Connect(ctx context.Context, addrs []string) (transport.Endpoint, error)
	// Close releases the listener if Connect is never called.
	Close() error
}

// listenTransport starts the transport called name. To add a transport,
// add a case.
func listenTransport(ctx context.Context, name string, spec transportSpec) (transportListener, error) {
	switch name {
	case TransportTCP:
		ln, err := tcp.Listen(ctx, spec.Auth.tcp(tcp.Config{
			Rank: spec.Rank, JobID: spec.JobID, ListenAddr: net.JoinHostPort(spec.Host, "0"),
		}))
		if err != nil {
			return nil, err
		}
		return tcpListener{ln, spec.Auth}, nil
	case TransportMetaRoCE:
		return listenMetaRoCE(ctx, spec)
	case TransportSHM:
		ln, err := shm.Listen(spec.shmConfig())
		if err != nil {
			return nil, err
		}
		return shmListener{ln}, nil
	case TransportAuto, TransportSHMMetaRoCE:
		return listenAuto(ctx, spec, TransportMetaRoCE)
	case TransportSHMTCP:
		return listenAuto(ctx, spec, TransportTCP)
	}
	return nil, fmt.Errorf("unknown transport %q", name)
}

func listenMetaRoCE(ctx context.Context, spec transportSpec) (transportListener, error) {
	ip, err := netip.ParseAddr(spec.Host)
	if err != nil {
		return nil, fmt.Errorf("metaroce: listen address %q: %v", spec.Host, err)
	}
	ln, err := mrtransport.Listen(ctx, mrtransport.Config{
		Rank: spec.Rank, Size: spec.Size, ListenAddr: netip.AddrPortFrom(ip.Unmap(), 0), Logger: spec.Logger,
		SpinWait: spec.SpinWait, OpenSocket: spec.OpenSocket,
		Core:      metaroce.Config{PeerTimeout: spec.PeerTimeout, Auth: spec.Auth.metaroce(spec.Rank)},
		PortRange: spec.UDPPorts, Interfaces: spec.PathInterfaces, ArrivalTimes: spec.ArrivalTimes, Paths: spec.Paths,
		SendSamples: spec.SendSamples, CoalesceWait: spec.CoalesceWait,
	})
	if err != nil {
		return nil, err
	}
	if spec.UDPProbe <= 0 {
		spec.UDPProbe = DefaultUDPProbeTimeout
	}
	return mrListener{ln, spec}, nil
}

// tcpListener adapts *tcp.Listener, whose Connect returns *tcp.Endpoint;
// with auth, its address carries the rank's site under GOCOLL_ENCRYPT=sites
// (auto's TCP fallback has none: MetaRoCE's addresses bring the sites).
type tcpListener struct {
	*tcp.Listener
	auth *transportAuth
}

func (l tcpListener) Addr() string { return l.auth.withSite(l.Listener.Addr()) }

func (l tcpListener) Connect(ctx context.Context, addrs []string) (transport.Endpoint, error) {
	ep, err := l.Listener.Connect(ctx, l.auth.learnSites(addrs))
	if err != nil {
		return nil, err
	}
	return ep, nil
}

// mrListener adapts *mrtransport.Listener, whose addresses are lists of
// path addresses. Its Connect is GOCOLL_TRANSPORT=metaroce's: it fails
// where UDP is blocked between some ranks (see fallback.go).
type mrListener struct {
	*mrtransport.Listener
	spec transportSpec
}

func (l mrListener) Addr() string { return l.spec.Auth.withSite(l.Listener.Addr().String()) }

// peerAddrs parses the ranks' addresses; on error it closes l.
func (l mrListener) peerAddrs(addrs []string) ([]mrtransport.PeerAddr, error) {
	peers := make([]mrtransport.PeerAddr, len(addrs))
	addrs = l.spec.Auth.learnSites(addrs)
	for r, a := range addrs {
		p, err := mrtransport.ParsePeerAddr(a)
		if err != nil {
			_ = l.Listener.Close()
			return nil, fmt.Errorf("rank %d's address: %w", r, err)
		}
		peers[r] = p
	}
	return peers, nil
}

func (l mrListener) Connect(ctx context.Context, addrs []string) (transport.Endpoint, error) {
	peers, err := l.peerAddrs(addrs)
	if err != nil {
		return nil, err
	}
	out, err := l.connectProbed(ctx, peers)
	switch {
	case err != nil:
		return nil, err
	case len(out.pairs) > 0:
		_ = l.Listener.Close()
		l.settle(ctx)
		return nil, blockedError(out.pairs, peers, l.spec.UDPProbe)
	case out.ep != nil:
		return out.ep, nil
	}
	return l.connectRest(ctx, peers, nil) // the probe ended as the last peer came up
}

// connectRest connects l to every peer but those in except; on error it
// closes l.
func (l mrListener) connectRest(ctx context.Context, peers []mrtransport.PeerAddr, except []bool) (*mrtransport.Endpoint, error) {
	if except == nil {
		except = make([]bool, len(peers))
	}
	ep, err := l.Listener.ConnectExcept(ctx, peers, except)
	if err != nil {
		_ = l.Listener.Close()
		return nil, err
	}
	return ep, nil
}

// shmListener adapts *shm.Listener, whose address is a struct.
type shmListener struct{ *shm.Listener }

func (l shmListener) Addr() string { return l.Listener.Addr().String() }

func (l shmListener) Connect(ctx context.Context, addrs []string) (transport.Endpoint, error) {
	for r, a := range addrs {
		if !l.Listener.SameHost(a) {
			_ = l.Listener.Close()
			return nil, fmt.Errorf("shm: rank %d runs on another host; %s=shm needs every rank on one host", r, EnvTransport)
		}
	}
	ep, err := l.Listener.Connect(ctx, addrs)
	if err != nil {
		_ = l.Listener.Close()
		return nil, err
	}
	return ep, nil
}

// autoListener listens on shared memory and on a network transport (far).
// At Connect, ranks on this host (same kernel, same host name) are reached
// through shared memory and the others through far; every rank sees the
// same addresses, so each pair agrees on its transport. With MetaRoCE as
// far it listens on TCP too, for the pairs between which UDP is blocked
// (see fallback.go).
type autoListener struct {
	shm      *shm.Listener // nil where shared memory cannot be set up
	far      transportListener
	fallback *tcp.Listener // nil unless far is MetaRoCE
	farName  string        // TransportMetaRoCE or TransportTCP
	host     string        // this rank's host name
	pick     string        // the transport Connect chose
	notices  io.Writer     // nil: none
	log      *slog.Logger  // nil: none
}

func (l *autoListener) chosen() string { return l.pick }

// autoSep separates the parts of an auto rank's address: shared-memory
// address (empty without one), network address, with MetaRoCE the TCP
// fallback's address, and the host name, last, which alone may contain it.
const autoSep = ";"

// listenAuto starts shared memory and the network transport farName. If
// shared memory fails to start (shm.Listen's error: not Linux, an old
// kernel), every rank is reached through farName.
func listenAuto(ctx context.Context, spec transportSpec, farName string) (transportListener, error) {
	far, err := listenTransport(ctx, farName, spec)
	if err != nil {
		return nil, err
	}
	l := &autoListener{far: far, farName: farName, host: spec.HostName, notices: spec.Notices, log: spec.Logger}
	if farName == TransportMetaRoCE {
		l.fallback, err = tcp.Listen(ctx, spec.Auth.tcp(tcp.Config{
			Rank: spec.Rank, JobID: spec.JobID, ListenAddr: net.JoinHostPort(spec.Host, "0"),
		}))
		if err != nil {
			_ = far.Close()
			return nil, fmt.Errorf("tcp (the fallback where UDP is blocked): %w", err)
		}
	}
	l.shm, err = shm.Listen(spec.shmConfig())
	if err != nil && spec.Logger != nil {
		spec.Logger.Debug("transport without shared memory", "err", err)
	}
	return l, nil
}

func (l *autoListener) Addr() string {
	s := ""
	if l.shm != nil {
		s = l.shm.Addr().String()
	}
	s += autoSep + l.far.Addr()
	if l.fallback != nil {
		s += autoSep + l.fallback.Addr()
	}
	return s + autoSep + l.host
}

func (l *autoListener) Connect(ctx context.Context, addrs []string) (transport.Endpoint, error) {
	n := len(addrs)
	shmAddrs, farAddrs, tcpAddrs := make([]string, n), make([]string, n), make([]string, n)
	local := make([]bool, n)
	nLocal := 0
	nParts := 3
	if l.fallback != nil {
		nParts = 4
	}
	for r, a := range addrs {
		parts := strings.SplitN(a, autoSep, nParts)
		if len(parts) != nParts {
			_ = l.Close()
			return nil, fmt.Errorf("rank %d's address %q is not a %s transport's", r, a, "shm+"+l.farName)
		}
		farAddrs[r] = parts[1]
		if nParts == 4 {
			tcpAddrs[r] = parts[2]
		}
		if l.shm != nil && parts[nParts-1] == l.host && l.shm.SameHost(parts[0]) {
			local[r], shmAddrs[r] = true, parts[0]
			nLocal++
		}
	}
	if nLocal == n {
		_ = l.far.Close()
		if l.fallback != nil {
			_ = l.fallback.Close()
		}
		l.pick = TransportSHM
		return shmListener{l.shm}.Connect(ctx, shmAddrs)
	}
	var near transport.Endpoint
	if nLocal > 1 {
		ep, err := l.shm.Connect(ctx, shmAddrs)
		if err != nil {
			_ = l.Close()
			return nil, err
		}
		near = ep
	} else if l.shm != nil { // this rank alone on its host
		_ = l.shm.Close()
	}
	far, fallback, blocked, err := l.connectFar(ctx, farAddrs, tcpAddrs)
	if err != nil {
		if near != nil {
			_ = near.Close()
		}
		return nil, err
	}
	l.pick = l.farName
	if near != nil {
		l.pick = "shm+" + l.farName
	}
	if fallback != nil {
		l.pick += "+" + TransportTCP
	} else if near == nil {
		return far, nil
	}
	byPeer := make([]transport.Endpoint, n)
	for r := range byPeer {
		switch {
		case local[r] && near != nil:
			byPeer[r] = near
		case blocked != nil && blocked[r]:
			byPeer[r] = fallback
		default:
			byPeer[r] = far
		}
	}
	ep, err := route.New(byPeer, far, fallback)
	if err != nil {
		for _, e := range []transport.Endpoint{near, far, fallback} {
			if e != nil {
				_ = e.Close()
			}
		}
		return nil, err
	}
	return ep, nil
}

// connectFar connects the network transport. With MetaRoCE it probes
// which pairs UDP reaches (fallback.go); where some pair is blocked it
// connects the TCP fallback on every rank, returned with the ranks this
// one reaches through it. On error it has closed the listeners.
func (l *autoListener) connectFar(ctx context.Context, farAddrs, tcpAddrs []string) (
	far, fallback transport.Endpoint, blocked []bool, err error) {
	ml, ok := l.far.(mrListener)
	if !ok || l.fallback == nil {
		far, err = l.far.Connect(ctx, farAddrs)
		return far, nil, nil, err
	}
	peers, err := ml.peerAddrs(farAddrs)
	if err != nil {
		_ = l.fallback.Close()
		return nil, nil, nil, err
	}
	out, err := ml.connectProbed(ctx, peers)
	if err != nil {
		_ = l.fallback.Close()
		return nil, nil, nil, err
	}
	if len(out.pairs) == 0 {
		_ = l.fallback.Close()
		if out.ep != nil {
			return out.ep, nil, nil, nil
		}
		mr, err := ml.connectRest(ctx, peers, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		return mr, nil, nil, nil
	}
	if slices.Contains(out.blocked, true) {
		line := fallbackNotice(ml.spec.Rank, out.blocked, peers, ml.spec.UDPProbe)
		if l.notices != nil {
			fmt.Fprintln(l.notices, line)
		}
		if l.log != nil {
			l.log.Warn(line)
		}
	}
	mr, err := ml.connectRest(ctx, peers, out.blocked)
	if err != nil {
		_ = l.fallback.Close()
		return nil, nil, nil, err
	}
	tcpEp, err := tcpListener{l.fallback, nil}.Connect(ctx, tcpAddrs)
	if err != nil {
		_ = mr.Close()
		return nil, nil, nil, fmt.Errorf("tcp (the fallback where UDP is blocked): %w", err)
	}
	return mr, tcpEp, out.blocked, nil
}

func (l *autoListener) Close() error {
	if l.shm != nil {
		_ = l.shm.Close()
	}
	if l.fallback != nil {
		_ = l.fallback.Close()
	}
	return l.far.Close()
}
