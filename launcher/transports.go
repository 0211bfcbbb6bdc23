package launcher

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/gocoll/gocoll/transport"
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
// on every path (a stopped process, a vanished host) at its peer timeout.
// shm+tcp, the default before MetaRoCE, stays available. Where shared
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
}

func (spec transportSpec) shmConfig() shm.Config {
	return shm.Config{Rank: spec.Rank, Size: spec.Size, SpinWait: spec.SpinWait, Logger: spec.Logger}
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
		ln, err := tcp.Listen(ctx, tcp.Config{
			Rank: spec.Rank, JobID: spec.JobID, ListenAddr: net.JoinHostPort(spec.Host, "0"),
		})
		if err != nil {
			return nil, err
		}
		return tcpListener{ln}, nil
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
		SpinWait: spec.SpinWait,
	})
	if err != nil {
		return nil, err
	}
	return mrListener{ln}, nil
}

// tcpListener adapts *tcp.Listener, whose Connect returns *tcp.Endpoint.
type tcpListener struct{ *tcp.Listener }

func (l tcpListener) Connect(ctx context.Context, addrs []string) (transport.Endpoint, error) {
	ep, err := l.Listener.Connect(ctx, addrs)
	if err != nil {
		return nil, err
	}
	return ep, nil
}

// mrListener adapts *mrtransport.Listener, whose addresses are lists of
// path addresses.
type mrListener struct{ *mrtransport.Listener }

func (l mrListener) Addr() string { return l.Listener.Addr().String() }

func (l mrListener) Connect(ctx context.Context, addrs []string) (transport.Endpoint, error) {
	peers := make([]mrtransport.PeerAddr, len(addrs))
	for r, a := range addrs {
		p, err := mrtransport.ParsePeerAddr(a)
		if err != nil {
			_ = l.Listener.Close()
			return nil, fmt.Errorf("rank %d's address: %w", r, err)
		}
		peers[r] = p
	}
	ep, err := l.Listener.Connect(ctx, peers)
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
// same addresses, so each pair agrees on its transport.
type autoListener struct {
	shm     *shm.Listener // nil where shared memory cannot be set up
	far     transportListener
	farName string // TransportMetaRoCE or TransportTCP
	host    string // this rank's host name
	pick    string // the transport Connect chose
}

func (l *autoListener) chosen() string { return l.pick }

// autoSep separates the parts of an auto rank's address: shared-memory
// address (empty without one), network address, host name. Neither of the
// first two contains it.
const autoSep = ";"

// listenAuto starts shared memory and the network transport farName. If
// shared memory fails to start (shm.Listen's error: not Linux, an old
// kernel), every rank is reached through farName.
func listenAuto(ctx context.Context, spec transportSpec, farName string) (transportListener, error) {
	far, err := listenTransport(ctx, farName, spec)
	if err != nil {
		return nil, err
	}
	l := &autoListener{far: far, farName: farName, host: spec.HostName}
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
	return s + autoSep + l.far.Addr() + autoSep + l.host
}

func (l *autoListener) Connect(ctx context.Context, addrs []string) (transport.Endpoint, error) {
	n := len(addrs)
	shmAddrs, farAddrs := make([]string, n), make([]string, n)
	local := make([]bool, n)
	nLocal := 0
	for r, a := range addrs {
		parts := strings.SplitN(a, autoSep, 3)
		if len(parts) != 3 {
			_ = l.Close()
			return nil, fmt.Errorf("rank %d's address %q is not a %s transport's", r, a, "shm+"+l.farName)
		}
		farAddrs[r] = parts[1]
		if l.shm != nil && parts[2] == l.host && l.shm.SameHost(parts[0]) {
			local[r], shmAddrs[r] = true, parts[0]
			nLocal++
		}
	}
	switch {
	case nLocal == n:
		_ = l.far.Close()
		l.pick = TransportSHM
		return shmListener{l.shm}.Connect(ctx, shmAddrs)
	case nLocal <= 1: // this rank alone on its host
		if l.shm != nil {
			_ = l.shm.Close()
		}
		l.pick = l.farName
		return l.far.Connect(ctx, farAddrs)
	}
	l.pick = "shm+" + l.farName
	near, err := l.shm.Connect(ctx, shmAddrs)
	if err != nil {
		_ = l.shm.Close()
		_ = l.far.Close()
		return nil, err
	}
	far, err := l.far.Connect(ctx, farAddrs)
	if err != nil {
		_ = near.Close()
		return nil, err
	}
	byPeer := make([]transport.Endpoint, n)
	for r := range byPeer {
		byPeer[r] = far
		if local[r] {
			byPeer[r] = near
		}
	}
	ep, err := route.New(byPeer)
	if err != nil {
		_ = near.Close()
		_ = far.Close()
		return nil, err
	}
	return ep, nil
}

func (l *autoListener) Close() error {
	if l.shm != nil {
		_ = l.shm.Close()
	}
	return l.far.Close()
}
