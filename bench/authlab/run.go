package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

// headerBytes is the p2p message header: the message's index.
const headerBytes = 8

// result is what one rank's run produced: the line it prints (empty on
// ranks that do not print) and the wrong bytes or elements it counted
// (on the printing rank, every rank's).
type result struct {
	line  string
	wrong int64
}

// authConfig is the core's authentication for mode with key.
func authConfig(mode metaroce.AuthMode, key jobkey.Key) metaroce.AuthConfig {
	if mode == metaroce.AuthNone {
		return metaroce.AuthConfig{}
	}
	return metaroce.AuthConfig{Key: key, Mode: mode}
}

// run connects this rank to the others as o says and runs o's test;
// listening, if not nil, is called once the path sockets are bound.
func run(ctx context.Context, o options, key jobkey.Key, listening func(rank int, addr mrtransport.PeerAddr)) (result, error) {
	cfg := mrtransport.Config{Rank: o.rank, Size: len(o.peers), ListenAddr: o.peers[o.rank], Paths: o.paths}
	cfg.Core.Auth = authConfig(o.mode, key)
	l, err := mrtransport.Listen(ctx, cfg)
	if err != nil {
		return result{}, err
	}
	if listening != nil {
		listening(o.rank, l.Addr())
	}
	addrs := make([]mrtransport.PeerAddr, len(o.peers))
	for r, a := range o.peers {
		for i := range o.paths {
			addrs[r].Paths = append(addrs[r].Paths, netip.AddrPortFrom(a.Addr(), a.Port()+uint16(i)))
		}
	}
	ep, err := l.Connect(ctx, addrs)
	if err != nil {
		_ = l.Close()
		return result{}, err
	}
	res, err := runTest(ctx, ep, o)
	return res, errors.Join(err, ep.Close())
}

// runTest runs o's test on this rank's endpoint ep, then says goodbye.
func runTest(ctx context.Context, ep transport.Endpoint, o options) (result, error) {
	test := allReduce
	if o.test == "p2p" {
		test = p2p
	}
	res, err := test(ctx, ep, o)
	if err != nil {
		return res, err
	}
	return res, goodbye(ctx, ep)
}

// goodbye returns once every other rank has reached it too, so that no
// rank closes its endpoint while a peer may still have to receive one of
// its messages: mrtransport drops the messages that arrived before their
// receive was posted when the sender's connection closes (peer's
// unexpected messages cleared on connDown). Each rank posts its receives
// of the others' goodbyes before it sends its own, so a goodbye always
// meets a posted receive, and a rank that has every goodbye knows every
// peer has finished receiving from it.
func goodbye(ctx context.Context, ep transport.Endpoint) error {
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 0xb7e0b7e, Op: 1}}
	var reqs []transport.Request
	for p := range ep.Size() {
		if p != ep.Rank() {
			reqs = append(reqs, ep.Recv(p, tag, nil))
		}
	}
	for p := range ep.Size() {
		if p != ep.Rank() {
			reqs = append(reqs, ep.Send(p, tag, nil))
		}
	}
	for _, r := range reqs {
		if _, err := r.Wait(ctx); err != nil {
			return fmt.Errorf("goodbye: %w", err)
		}
	}
	return nil
}

// p2pTag is the tag of p2p message i; message n+1 carries the sender's
// CPU time.
func p2pTag(i int) transport.Tag {
	return transport.Tag{OpKey: transport.OpKey{Comm: 0xa17, Op: uint64(i)}}
}

// fillPattern writes the payload every p2p message carries after its header.
func fillPattern(b []byte) {
	for j := headerBytes; j < len(b); j++ {
		b[j] = byte(j % 251)
	}
}

// p2p is the p2p test: rank 0 sends, rank 1 receives and prints.
func p2p(ctx context.Context, ep transport.Endpoint, o options) (result, error) {
	var bufs [2][]byte
	for i := range bufs {
		bufs[i] = make([]byte, o.size)
	}
	if ep.Rank() == 0 {
		return result{}, p2pSend(ctx, ep, o, bufs)
	}
	return p2pRecv(ctx, ep, o, bufs)
}

// p2pSend sends message 0 alone (the warm-up), then messages 1 to n with
// two in flight, each from the buffer its index's parity names, then its
// CPU time over 1 to n.
func p2pSend(ctx context.Context, ep transport.Endpoint, o options, bufs [2][]byte) error {
	for _, b := range bufs {
		fillPattern(b)
	}
	var reqs [2]transport.Request
	var cpu0 time.Duration
	for i := 0; i <= o.n; i++ {
		b := i % 2
		if reqs[b] != nil {
			if _, err := reqs[b].Wait(ctx); err != nil {
				return fmt.Errorf("send %d: %w", i-2, err)
			}
		}
		binary.LittleEndian.PutUint64(bufs[b], uint64(i))
		reqs[b] = ep.Send(1, p2pTag(i), bufs[b])
		if i == 0 {
			if _, err := reqs[0].Wait(ctx); err != nil {
				return fmt.Errorf("warm-up send: %w", err)
			}
			reqs[0], cpu0 = nil, collectivetest.CPUTime()
		}
	}
	for i, r := range reqs {
		if r != nil {
			if _, err := r.Wait(ctx); err != nil {
				return fmt.Errorf("send of parity %d: %w", i, err)
			}
		}
	}
	cpu := binary.LittleEndian.AppendUint64(nil, uint64(collectivetest.CPUTime()-cpu0))
	_, err := ep.Send(1, p2pTag(o.n+1), cpu).Wait(ctx)
	return err
}

// p2pRecv receives what p2pSend sends, two receives posted, times
// messages 1 to n from the warm-up's arrival and returns the line.
func p2pRecv(ctx context.Context, ep transport.Endpoint, o options, bufs [2][]byte) (result, error) {
	var res result
	for _, b := range bufs {
		clear(b)
	}
	recv := func(i int) transport.Request { return ep.Recv(0, p2pTag(i), bufs[i%2]) }
	wait := func(i int, r transport.Request) error {
		n, err := r.Wait(ctx)
		if err != nil {
			return fmt.Errorf("receive %d: %w", i, err)
		}
		if n != o.size || binary.LittleEndian.Uint64(bufs[i%2]) != uint64(i) {
			res.wrong++
		}
		return nil
	}
	if err := wait(0, recv(0)); err != nil {
		return result{}, err
	}
	var reqs [2]transport.Request
	for i := 1; i <= min(2, o.n); i++ {
		reqs[i%2] = recv(i)
	}
	t0, cpu0 := time.Now(), collectivetest.CPUTime()
	for i := 1; i <= o.n; i++ {
		if err := wait(i, reqs[i%2]); err != nil {
			return result{}, err
		}
		if reqs[i%2] = nil; i+2 <= o.n {
			reqs[i%2] = recv(i + 2)
		}
	}
	secs, cpu := time.Since(t0).Seconds(), collectivetest.CPUTime()-cpu0
	last := bufs[o.n%2]
	for j := headerBytes; j < len(last); j++ {
		if last[j] != byte(j%251) {
			res.wrong++
		}
	}
	var peerCPU [8]byte
	if _, err := ep.Recv(0, p2pTag(o.n+1), peerCPU[:]).Wait(ctx); err != nil {
		return result{}, fmt.Errorf("sender's CPU time: %w", err)
	}
	cpu += time.Duration(binary.LittleEndian.Uint64(peerCPU[:]))
	bytes := float64(o.n) * float64(o.size)
	res.line = fmt.Sprintf("authlab test=p2p mode=%v ranks=2 paths=%d size=%d n=%d seconds=%.3f goodput_mbit=%.1f cpu_s_per_gb=%.3f wrong=%d",
		o.mode, o.paths, o.size, o.n, secs, bytes*8/secs/1e6, cpu.Seconds()/(bytes/1e9), res.wrong)
	return res, nil
}

// allReduce is the allreduce test: rank r's element j is (r+1)·(j mod 7),
// so every sum is an exact small integer.
func allReduce(ctx context.Context, ep transport.Endpoint, o options) (result, error) {
	c, err := collective.New(ep, 1, collective.Config{})
	if err != nil {
		return result{}, err
	}
	defer func() { _ = c.Close() }()
	n, rank := c.Size(), c.Rank()
	send, recv := make([]float32, o.size/4), make([]float32, o.size/4)
	for j := range send {
		send[j], recv[j] = float32((rank+1)*(j%7)), float32(math.NaN())
	}
	call := func(what string) error {
		if err := collective.AllReduce(ctx, c, send, recv, collective.Sum); err != nil {
			return fmt.Errorf("%s AllReduce: %w", what, err)
		}
		return nil
	}
	for range 2 {
		if err := call("warm-up"); err != nil {
			return result{}, err
		}
	}
	if err := c.Barrier(ctx); err != nil {
		return result{}, err
	}
	t0, cpu0 := time.Now(), collectivetest.CPUTime()
	for range o.n {
		if err := call("timed"); err != nil {
			return result{}, err
		}
	}
	secs, cpu := time.Since(t0).Seconds(), collectivetest.CPUTime()-cpu0
	var wrong float64
	ranks := float32(n * (n + 1) / 2)
	for j, v := range recv {
		if v != ranks*float32(j%7) {
			wrong++
		}
	}
	slowest, total := []float64{secs}, []float64{cpu.Seconds(), wrong}
	if err := collective.AllReduce(ctx, c, slowest, slowest, collective.Max); err != nil {
		return result{}, err
	}
	if err := collective.AllReduce(ctx, c, total, total, collective.Sum); err != nil {
		return result{}, err
	}
	res := result{wrong: int64(total[1])}
	if rank == 0 {
		perOp := slowest[0] / float64(o.n)
		busbw := float64(o.size) / perOp / 1e9 * 2 * float64(n-1) / float64(n)
		res.line = fmt.Sprintf("authlab test=allreduce mode=%v ranks=%d paths=%d size=%d n=%d seconds_per_op=%.4f busbw_gbs=%.4f cpu_ms_per_op=%.2f wrong=%d",
			o.mode, n, o.paths, o.size, o.n, perOp, busbw, total[0]/float64(o.n)*1e3, res.wrong)
	}
	return res, nil
}
