package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/simnet"
)

// simSpec is one simulated collective: the real algorithm of collective,
// run by one goroutine per rank over a transport/simnet world.
type simSpec struct {
	topo     topology.Topology
	links    tune.Links
	coll     tune.Collective
	algo     collective.Algorithm // forced; never AlgoAuto
	bytes    int64                // the buffer, a multiple of 4 (float32 elements)
	chunk    int                  // the chunk size of the full-size run
	channels int                  // Config.Channels (ring AllReduce, trees); 0 means 1
	free     bool                 // payload-free: scaled buffers, no bytes copied
}

// simResult is what a simulation measured.
type simResult struct {
	time  time.Duration // virtual
	scale int           // buffers and chunk were this many times smaller
	wall  time.Duration // real time the simulation took
	wrong int           // ranks whose result was wrong (data mode only)
}

// simMaxBufferBytes bounds the memory the ranks' buffers of one simulation
// may take: n ranks times the (scaled) buffer.
const simMaxBufferBytes = 8 << 30

// simScale returns the factor payload-free mode shrinks buffers and chunk
// by: the largest power of two that keeps the chunk at least
// collective.ChunkBytesMin, the buffer a whole number of float32 elements
// and at least share bytes per rank.
func simScale(bytes int64, chunk, ranks, share int) int {
	s := 1
	for {
		n := int64(2 * s)
		if chunk/int(n) < collective.ChunkBytesMin || bytes%(4*n) != 0 || bytes/n < int64(share*ranks) || n > simnet.MaxScale {
			return s
		}
		s = int(n)
	}
}

// simTreeScale bounds the scale of a tree's run (or of one the model may
// give a tree) so that its smallest messages stay above collective's
// inlineBytesMax once scaled, as simMinShare's note asks: a tree moves its
// part (bytes over 2 x channels, channels up to tune.ChannelsMax where the
// model chooses) in chunks of tune.TreeChunk, which may be a fraction of
// the chunk (gocoll sim, 8 ranks, 1 MiB: the payload-free tree ran 8 %
// fast at scale 128, its 1 KiB chunks riding in headers).
func simTreeScale(bytes int64, chunk, channels int) int {
	if channels == 0 {
		channels = tune.ChannelsMax
	}
	part := int(bytes / int64(2*channels))
	return scaleKeeping(int64(min(part, tune.TreeChunk(part, chunk))), simnet.MaxScale)
}

// scaleKeeping is the largest power of two up to most that keeps a
// message of msg bytes at least collective.ChunkBytesMin (above
// inlineBytesMax) once scaled down by it.
func scaleKeeping(msg int64, most int) int {
	s := 1
	for msg/int64(2*s) >= collective.ChunkBytesMin && s < most {
		s *= 2
	}
	return s
}

// simHierScale bounds the scale of a hierarchical run (or of one the
// model may choose) so that its top ring's messages, an even piece
// (tune.HierPieces) over the ranks or a chunk, stay above collective's
// inlineBytesMax once scaled, as simMinShare's note asks, where the
// buffers then fit in simHierBufferBytes; else it leaves scale as it is
// (the larger calls, whose first messages are a small share of a pair's).
// 4 x 8 x 8 at 4 MiB (one piece; a top ring's 6 steps of 16 KiB on each
// pair, the first riding in its header at scale 16): 61.8 ms at scale
// 16, 70.0 in data mode; the model 70.7.
func simHierScale(scale int, bytes int64, chunk, ranks int) int {
	p := tune.HierPieces(int(bytes), chunk, ranks)
	s := scaleKeeping(min(int64(chunk), bytes/int64(p*ranks)), scale)
	if int64(ranks)*bytes/int64(s) > simHierBufferBytes {
		return scale
	}
	return s
}

// simHierBufferBytes bounds the memory simHierScale may give the ranks'
// buffers.
const simHierBufferBytes = 1 << 30

// simMinShare is the fewest bytes per rank a scaled buffer keeps. A
// message of at most 4064 bytes (collective's inlineBytesMax) travels
// inside its operation header's message, whose length simnet does not
// scale, so such messages must stay rare: the ring's messages are a
// rank's share over its channels, and it keeps simMinRingShare per rank
// and channel (since ce33ab5 a 1 KiB share ran the ring 6 % fast); the
// other algorithms' messages are far larger than a share, and a smaller
// share keeps 1024 ranks in memory (each rank holds the whole scaled
// buffer: 1024 x 1 MiB at 64 MiB).
const (
	simMinShare     = 1 << 10
	simMinRingShare = 4 << 10
)

// simulate runs spec once.
func simulate(ctx context.Context, spec simSpec) (simResult, error) {
	n := spec.topo.Size()
	res := simResult{scale: 1}
	if spec.free {
		share := simMinShare
		if spec.algo == collective.AlgoRing { // its messages are a rank's share over its channels
			share = simMinRingShare * max(1, spec.channels)
		}
		res.scale = simScale(spec.bytes, spec.chunk, n, share)
		if spec.algo == collective.AlgoTree || spec.algo == collective.AlgoAuto {
			res.scale = min(res.scale, simTreeScale(spec.bytes, spec.chunk, spec.channels))
		}
		if spec.algo == collective.AlgoHierarchical || spec.algo == collective.AlgoAuto {
			res.scale = min(res.scale, simHierScale(res.scale, spec.bytes, spec.chunk, n))
		}
	}
	if spec.bytes%4 != 0 {
		return res, fmt.Errorf("size %d is not a whole number of float32 elements (a multiple of 4)", spec.bytes)
	}
	if b := int64(n) * spec.bytes / int64(res.scale); b > simMaxBufferBytes {
		return res, fmt.Errorf("%d ranks of %d B buffers (scaled by %d) need %d MiB, more than the limit of %d MiB; use --payload free or a larger --chunk",
			n, spec.bytes, res.scale, b>>20, simMaxBufferBytes>>20)
	}
	w, err := simnet.NewWorldWith(spec.topo, spec.links, simnet.Options{Scale: res.scale, NoPayload: spec.free})
	if err != nil {
		return res, err
	}
	defer w.Close()
	topo := scaledLinks(spec.topo, spec.links, res.scale)
	cfg := collective.Config{Topology: &topo, ChunkBytes: spec.chunk / res.scale, StallTimeout: -1, Timeout: time.Hour, Channels: spec.channels}
	switch spec.coll {
	case tune.AllReduce:
		cfg.AllReduce = spec.algo
	case tune.Broadcast:
		cfg.Broadcast = spec.algo
	case tune.Reduce:
		cfg.Reduce = spec.algo
	}
	count := int(spec.bytes / 4 / int64(res.scale))
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	eps := w.Endpoints()
	for r, ep := range eps {
		wg.Go(func() {
			defer ep.Close() // a rank that is done stops counting as running
			ok, err := simRank(ctx, ep, r, n, count, cfg, spec)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("rank %d: %w", r, err)
			}
			if err == nil && !ok && !spec.free {
				res.wrong++
			}
		})
	}
	wg.Wait()
	res.time, res.wall = w.Now(), time.Since(start)
	return res, firstErr
}

// simRank is one rank: it fills its buffer with rank+1 (exact in float32
// for any sum the limits allow), runs the collective, and reports whether
// the first and last elements are what they must be.
func simRank(ctx context.Context, ep transport.Endpoint, r, n, count int, cfg collective.Config, spec simSpec) (bool, error) {
	c, err := collective.New(ep, 1, cfg)
	if err != nil {
		return false, err
	}
	x := make([]float32, count)
	for i := range x {
		x[i] = float32(r + 1)
	}
	var want float32
	check := true
	switch spec.coll {
	case tune.AllReduce:
		err, want = collective.AllReduce(ctx, c, x, x, collective.Sum), float32(n*(n+1)/2)
	case tune.Broadcast:
		err, want = collective.Broadcast(ctx, c, x, x, 0), 1
	case tune.Reduce:
		err, want, check = collective.Reduce(ctx, c, x, x, collective.Sum, 0), float32(n*(n+1)/2), r == 0
	default:
		err = errors.New("unknown collective")
	}
	if err != nil || count == 0 || !check {
		return true, err
	}
	return x[0] == want && x[count-1] == want, nil
}

// scaledLinks returns topo carrying the fabric's link figures (links)
// with every bandwidth divided by scale, so that the collectives' own uses
// of the cost model (the automatic choice, the hierarchical AllReduce's
// ramp: tune.HierRamp) see, on the buffers and chunks a payload-free run
// divides by scale, the times the full size takes.
func scaledLinks(topo topology.Topology, links tune.Links, scale int) topology.Topology {
	at := func(l topology.Link) *topology.Link {
		l.Bandwidth /= float64(max(1, scale))
		return &l
	}
	ls := &topology.Links{Host: at(links.Host), Site: at(links.Site), WAN: at(links.WAN)}
	for _, p := range links.Pairs {
		p.Link = *at(p.Link)
		ls.Pairs = append(ls.Pairs, p)
	}
	topo.Links = ls
	return topo
}
