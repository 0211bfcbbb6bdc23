//go:build linux

package shm

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/transport"
)

// Listener is one rank's segment and doorbell, made and published before
// the peers are known.
type Listener struct {
	cfg   Config
	seg   *segment
	memfd int
	bell  *doorbell
	addr  Addr
	used  bool
}

// Listen makes this rank's segment and doorbell. Its Addr is what the other
// ranks pass to Connect.
func Listen(cfg Config) (*Listener, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	boot, err := bootID()
	if err != nil {
		return nil, err
	}
	pidns, err := pidNamespace()
	if err != nil {
		return nil, err
	}
	var nb [8]byte
	_, _ = rand.Read(nb[:])
	nonce := binary.LittleEndian.Uint64(nb[:])
	seg, memfd, err := createSegment(cfg, nonce)
	if err != nil {
		return nil, err
	}
	bell, err := newDoorbell()
	if err != nil {
		seg.unmap()
		closeFD(memfd)
		return nil, err
	}
	allowPeers()
	return &Listener{
		cfg: cfg, seg: seg, memfd: memfd, bell: bell,
		addr: Addr{BootID: boot, PIDNS: pidns, PID: os.Getpid(), MemFD: memfd, EventFD: bell.fd, Nonce: nonce},
	}, nil
}

// Addr is this rank's address.
func (l *Listener) Addr() Addr { return l.addr }

// SameHost reports whether addr names a rank that this listener's rank can
// reach through shared memory: one running under the same kernel and in
// the same PID namespace. It is false for anything that is not an shm
// address of this version.
func (l *Listener) SameHost(addr string) bool {
	a, err := ParseAddr(addr)
	return err == nil && a.BootID == l.addr.BootID && a.PIDNS == l.addr.PIDNS
}

// Close releases a listener that was never connected.
func (l *Listener) Close() error {
	if l.used {
		return nil
	}
	l.used = true
	l.seg.unmap()
	closeFD(l.memfd)
	return l.bell.close()
}

// Connect maps the segments of the ranks in addrs (rank i at index i) and
// returns this rank's endpoint. An empty address leaves that rank out:
// sends to it and receives from it fail with ErrBadRank (a job reaches it
// through another transport). The listener is used up either way.
func (l *Listener) Connect(ctx context.Context, addrs []string) (*Endpoint, error) {
	if l.used {
		return nil, fmt.Errorf("shm: listener already used")
	}
	if len(addrs) != l.cfg.Size {
		return nil, fmt.Errorf("shm: %d addresses for a world of %d", len(addrs), l.cfg.Size)
	}
	e := &Endpoint{
		cfg: l.cfg, rank: l.cfg.Rank, size: l.cfg.Size, log: l.cfg.Logger, home: l.addr,
		seg: l.seg, memfd: l.memfd, bell: l.bell,
		peers:      make([]*peer, l.cfg.Size),
		recvs:      make(map[matchKey][]*request),
		unexpected: make(map[matchKey][]arrival),
		sends:      newSendTable(l.cfg.MaxPendingSends),
		aborted:    make(map[transport.OpKey]error),
		down:       make([]error, l.cfg.Size),
		eagerMax:   min(EagerMax, InlineMax+(l.cfg.RingSlots/2-1)*SlotBytes),
		hello:      make([]bool, l.cfg.Size),
		helloErr:   make([]error, l.cfg.Size),
		hellos:     make(chan int, l.cfg.Size),
		stop:       make(chan struct{}),
		stopped:    make(chan struct{}),
		boardsUsed: make([]bool, l.cfg.Boards),
	}
	e.boardHost = boardHost{e}
	for r, a := range addrs {
		if err := ctx.Err(); err != nil {
			e.releasePeers()
			return nil, err
		}
		if r == e.rank {
			e.peers[r] = &peer{ep: e, rank: r, seg: l.seg, pid: l.addr.PID, pidfd: -1, bellfd: l.bell.fd, ring: l.seg.ring(r)}
			continue
		}
		if a == "" {
			continue
		}
		p, err := e.dial(r, a)
		if err != nil {
			e.releasePeers()
			return nil, err
		}
		e.peers[r] = p
	}
	l.used = true
	local, inProcess := 1, false
	for r, p := range e.peers {
		if p != nil && r != e.rank {
			local++
			inProcess = inProcess || p.pid == l.addr.PID
		}
	}
	e.goschedEvery = goschedEveryFor(inProcess, local == e.size)
	cpus := e.localCPUs(inProcess)
	if e.cfg.spinDefault {
		e.cfg.SpinWait = defaultSpinWait(local, inProcess, cpus)
	}
	if e.cfg.boardSpinDefault && oversubscribed(local, inProcess, cpus) {
		e.cfg.BoardSpinWait, e.boardSpinShort = OversubscribedBoardSpinWait, true
	}
	if !e.cfg.NoBalance && oversubscribed(local, inProcess, cpus) {
		e.balance = newBalancer(e)
	}
	go e.run()
	if err := e.greet(ctx); err != nil {
		_ = e.Close()
		return nil, err
	}
	return e, nil
}

// greet tells every connected peer that this rank has mapped every
// segment, and waits until each has said the same: Connect returns only
// once no peer still needs this rank's process to take its descriptors, so
// a rank may exit right after Connect without failing another's.
func (e *Endpoint) greet(ctx context.Context) error {
	want := 0
	for r, p := range e.peers {
		if p == nil || r == e.rank {
			continue
		}
		want++
		if err := p.put(&slot{kind: kindHello, inline: e.helloProof(r, p)}); err != nil {
			return fmt.Errorf("shm: greeting rank %d: %w", r, err)
		}
	}
	for got := 0; got < want; got++ {
		select {
		case r := <-e.hellos:
			e.mu.Lock()
			err := e.helloErr[r]
			e.mu.Unlock()
			if err != nil {
				return err
			}
		case <-ctx.Done():
			e.mu.Lock()
			defer e.mu.Unlock()
			var missing []int
			for r, p := range e.peers {
				if p != nil && r != e.rank && !e.hello[r] {
					missing = append(missing, r)
				}
			}
			return fmt.Errorf("shm: rank %d: ranks %v did not connect: %w", e.rank, missing, ctx.Err())
		}
	}
	return nil
}

// greeted records src's hello; a peer's second one is ignored, so hellos
// never holds more than its capacity, one per rank.
func (e *Endpoint) greeted(src int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.hello[src] {
		e.hello[src] = true
		e.hellos <- src
	}
}

// dial maps rank r's segment from its address.
func (e *Endpoint) dial(r int, s string) (*peer, error) {
	a, err := ParseAddr(s)
	if err != nil {
		return nil, fmt.Errorf("rank %d's address: %w", r, err)
	}
	if a.BootID != e.home.BootID {
		return nil, fmt.Errorf("shm: rank %d runs under another kernel (boot id %s)", r, a.BootID)
	}
	if a.PIDNS != e.home.PIDNS {
		return nil, fmt.Errorf("shm: rank %d runs in another PID namespace (%d, this rank's %d): a container of its own?", r, a.PIDNS, e.home.PIDNS)
	}
	pidfd, err := unix.PidfdOpen(a.PID, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: rank %d's process %d: %w", r, a.PID, err)
	}
	unix.CloseOnExec(pidfd)
	p := &peer{ep: e, rank: r, pid: a.PID, pidfd: pidfd, bellfd: -1, nonce: a.Nonce}
	memfd, err := takeFD(pidfd, a.MemFD, "segment")
	if err == nil {
		p.seg, err = openSegment(memfd, a, e.size, r)
		closeFD(memfd) // the mapping keeps the memory
	}
	if err == nil && p.seg.slots != e.cfg.RingSlots {
		err = fmt.Errorf("shm: rank %d has %d-slot rings, this rank %d", r, p.seg.slots, e.cfg.RingSlots)
		p.seg.unmap()
	}
	if err == nil && (p.seg.boards != e.cfg.Boards || p.seg.boards > 0 && p.seg.boardBytes != e.cfg.BoardBytes) {
		err = fmt.Errorf("shm: rank %d has %d boards of %d bytes, this rank %d of %d (Config.Boards, Config.BoardBytes)",
			r, p.seg.boards, p.seg.boardBytes, e.cfg.Boards, e.cfg.BoardBytes)
		p.seg.unmap()
	}
	if err == nil {
		p.bellfd, err = takeFD(pidfd, a.EventFD, "doorbell")
		if err != nil {
			p.seg.unmap()
		}
	}
	if err != nil {
		closeFD(pidfd)
		return nil, err
	}
	p.ring = p.seg.ring(e.rank)
	if base := binary.LittleEndian.Uint64(p.seg.mem[offBase:]); base != 0 {
		p.nonceAddr = base + offNonce
	}
	return p, nil
}

// releasePeers undoes a Connect that failed half way; the listener's own
// segment and doorbell stay for its Close.
func (e *Endpoint) releasePeers() {
	for _, p := range e.peers {
		if p != nil {
			p.release()
		}
	}
}

func closeFD(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// NewLocalWorld builds n connected endpoints in this process, rank i at
// index i, each configured by cfg except Rank and Size. It is for tests and
// for benchmarks of ranks in one process; the caller closes every endpoint.
func NewLocalWorld(ctx context.Context, n int, cfg Config) ([]*Endpoint, error) {
	ls := make([]*Listener, n)
	addrs := make([]string, n)
	closeAll := func() {
		for _, l := range ls {
			if l != nil {
				_ = l.Close()
			}
		}
	}
	for i := range n {
		c := cfg
		c.Rank, c.Size = i, n
		l, err := Listen(c)
		if err != nil {
			closeAll()
			return nil, err
		}
		ls[i], addrs[i] = l, l.Addr().String()
	}
	eps := make([]*Endpoint, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, l := range ls { // concurrently: Connect waits for every peer's
		wg.Go(func() { eps[i], errs[i] = l.Connect(ctx, addrs) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for i, ep := range eps {
			if ep != nil {
				_ = ep.Close()
			} else {
				_ = ls[i].Close()
			}
		}
		return nil, err
	}
	return eps, nil
}

// localCPUs is how many processors the ranks of this host can run on:
// the union of their processes' affinity masks (a rank bound to a core
// sees one, but ranks bound a core each do not share one), or, where a
// mask cannot be read, this process's (runtime.NumCPU). Ranks that are
// goroutines of this process (inProcess) share its mask.
func (e *Endpoint) localCPUs(inProcess bool) int {
	if inProcess {
		return runtime.NumCPU()
	}
	pids := []int{0}
	for r, p := range e.peers {
		if p != nil && r != e.rank {
			pids = append(pids, p.pid)
		}
	}
	if n, err := affinity.Union(pids); err == nil && n > 0 {
		return n
	}
	return runtime.NumCPU()
}
