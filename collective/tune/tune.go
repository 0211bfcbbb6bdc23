// Package tune predicts how long each collective algorithm takes on a
// topology and picks the fastest, as NCCL's tuner does, with an alpha-beta
// model: a message costs its link's latency plus its bytes over the link's
// bandwidth. It is a pure function of its arguments (the placement of the
// ranks, the message size, the chunk size and the link figures), so every
// rank that asks it the same question gets the same answer.
//
// Each algorithm is a sequence of phases. A phase is a set of transfers
// that run at the same time, with the number of dependent steps on its
// critical path and the chunk its pipeline moves; it takes
//
//	lat + fill + (k−1)/k × load   (pipelines of k chunks: trees, chains)
//	max(lat, load)                (rings: messages posted ahead, so the
//	                               latencies hide behind the busiest link;
//	                               the operation's last phase takes at
//	                               least load + flight, its busiest link's
//	                               last byte landing one latency later)
//	lat + load                    (exchanges of whole buffers)
//
// where lat sums the latencies along the critical path (in a ring, whose
// step forwards what the step before produced, each of its steps hops
// also moves one chunk of the step's message at that hop's rate, so a
// ring of two ranks over one link of latency α takes steps × (α +
// chunk/β), as gocoll sim does), fill is the time
// the first chunk takes along the longest path (so a pipelined chain of s
// equal steps and k chunks costs s + k − 1 chunk times), and load is the
// busiest link's: the bytes it carries over its bandwidth, divided by
// min(transfers on it, Lanes); in a tree, whose edges move one chunk at a
// time (its part in TreeChunk's chunks), each flow's bytes over its rate
// plus a latency per chunk count as load too. The links of a
// transfer are its ranks' ports on their host (Host level: transfers
// between ranks of a host), their hosts' NICs (Site level: every transfer
// leaving or entering a host), their sites' uplinks (WAN level: every
// transfer between sites), a pair link where Links.Pairs has one, and the
// connection between the two ranks (one lane: one transfer gets one
// lane's bandwidth). An operation ends with one more latency where the
// algorithm never talked to a neighbour in the binomial tree the
// operation headers are checked along; a forced Broadcast or Reduce ends
// with the confirm round (confirm.go). transport/simnet runs the real
// algorithms on the same links; at 256 ranks (4 sites × 8 hosts × 8) the
// two agree within 15 % from 8 B to 256 MiB for every AllReduce, Reduce
// and Broadcast algorithm (bench/sim.sh, bench/results/sim).
//
// A real transport between hosts also loses up to a round trip as a
// connection opens: the first phase in which a connection moves more than
// its path's bandwidth-delay product takes up to that round trip more,
// and a tree the round trips of the edges its longest path opens one
// after another (opening.go; Input.IdealTransport, gocoll sim's fabric,
// leaves them out).
//
// Where the link figures also give the CPU a level's transport costs a
// byte and a message (the probe measures them) and the ranks' machines
// their cores, a phase takes at least the CPU work of the ranks sharing a
// machine over its cores, and its steps pay for ranks beyond the cores
// that receive at once (cpu.go): on a machine that the ranks of several
// "hosts" share, as in a network-namespace lab, the CPU can bind before
// the links do. Where the two are close and a tree's few chunks in flight
// feed its busiest link, neither stays busy all the time, and the phase
// takes longer than either (overlap.go). Without those figures nothing
// changes.
package tune

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gocoll/gocoll/topology"
)

// Collective is an operation the model knows.
type Collective int

// The collectives the model predicts.
const (
	AllReduce Collective = iota
	Broadcast
	Reduce
)

func (c Collective) String() string {
	switch c {
	case AllReduce:
		return "AllReduce"
	case Broadcast:
		return "Broadcast"
	case Reduce:
		return "Reduce"
	}
	return fmt.Sprintf("Collective(%d)", int(c))
}

// Link is the figures of one level of links, or of one link (see
// topology.Link).
type Link = topology.Link

// Links gives a Link per level: between ranks of a host, between hosts of
// a site (a host's NIC), between sites (a site's uplink), and optionally
// per pair of hosts.
type Links struct {
	Host, Site, WAN Link
	// Pairs, where given, set the latency and the bandwidth of the
	// transfers between two hosts (either way): such a transfer gets at
	// most the pair's Bandwidth (Lanes of them at once) and still shares
	// the hosts' NICs and the sites' uplinks at their levels' figures.
	Pairs []topology.HostLink
	// ReducePerByte is the CPU seconds a rank spends reducing a byte it
	// received (topology.Links.ReducePerByte); 0: unknown, not priced.
	ReducePerByte float64
}

// With returns ls with the figures t.Links gives (a version 2 topology
// file's levels and links) in place of its own.
func (ls Links) With(t topology.Topology) Links {
	if t.Links == nil {
		return ls
	}
	for _, l := range []struct {
		from *Link
		to   *Link
	}{{t.Links.Host, &ls.Host}, {t.Links.Site, &ls.Site}, {t.Links.WAN, &ls.WAN}} {
		if l.from != nil {
			*l.to = *l.from
		}
	}
	if len(t.Links.Pairs) > 0 {
		var keep []topology.HostLink
		for _, p := range ls.Pairs {
			if _, given := t.Pair(p.A, p.B); !given {
				keep = append(keep, p)
			}
		}
		ls.Pairs = append(keep, t.Links.Pairs...)
	}
	if t.Links.ReducePerByte > 0 {
		ls.ReducePerByte = t.Links.ReducePerByte
	}
	return ls
}

// DefaultLinks are assumed figures, for when nothing was measured: shared
// memory (2 µs, 4 GB/s), a 10 Gbit/s LAN (25 µs, 1.25 GB/s) and a WAN
// of 800 Mbit/s at 2 ms one way (the two-site lab of ../shared/netlab).
func DefaultLinks() Links {
	return Links{
		Host: Link{Latency: 2 * time.Microsecond, Bandwidth: 4e9},
		Site: Link{Latency: 25 * time.Microsecond, Bandwidth: 1.25e9},
		WAN:  Link{Latency: 2 * time.Millisecond, Bandwidth: 100e6},
	}
}

// Input is one question to the model.
type Input struct {
	Topology   topology.Topology // where each rank runs; must be valid
	Bytes      int               // the message: an AllReduce's buffer, a Broadcast's; >= 0
	ChunkBytes int               // pipelining unit; > 0
	Root       int               // Broadcast and Reduce
	// Channels are the ring AllReduce's and the trees' (collective's
	// Config.Channels): that many rings, fewer where RingStrides gives
	// fewer, or pairs of trees, fewer where TreeChannels gives fewer; 0
	// lets the model choose among 1, 2, 4, 8 and 16 (Prediction.Channels).
	// Range [0, ChannelsMax].
	Channels int
	// Links are the link figures; those Topology.Links gives win (see
	// Links.With).
	Links Links
	// IdealTransport says the transport opens every transfer at its
	// link's rate (transport/simnet's fabric, gocoll sim): the model
	// leaves out the round trip a real transport's window takes to open
	// (opening.go).
	IdealTransport bool
}

// Prediction is one candidate's predicted time.
type Prediction struct {
	Algorithm string        // as collective.ParseAlgorithm names it
	Time      time.Duration // saturated at math.MaxInt64 (about 292 years), as CPU is
	Channels  int           // the ring AllReduce's (len of RingStrides) or the tree's (TreeChannels) channels; else 0
	// Chunk is the tree's chunk where it cuts its parts finer than
	// Input.ChunkBytes (TreeChunk); else 0.
	Chunk int
	// CPU is the CPU time the call costs, all ranks together, where the
	// link figures give the CPU a byte and a message cost (cpu.go); else
	// 0. CPUBound says that some phase's CPU work on a machine's cores,
	// or its steps' scheduling, set its time.
	CPU      time.Duration
	CPUBound bool
}

// Predict returns every algorithm of coll with its predicted time, fastest
// first (ties in the order the algorithms are listed: ring or chain first),
// except that the second comes first where the two are within
// cpuTieMargin, the CPU term binds either, and the links alone predict the
// second faster (breakCPUTie).
func Predict(coll Collective, in Input) ([]Prediction, error) {
	in.Links = in.Links.With(in.Topology)
	if err := in.validate(); err != nil {
		return nil, err
	}
	m := newModel(in)
	var cands []candidate
	ringChannels, treeChannels := 0, 0
	tree := func(root int, up, down bool) []phase {
		ph, c := m.treeChannels(in.Channels, root, up, down)
		treeChannels = c
		return ph
	}
	switch coll {
	case AllReduce:
		ring := func() []phase {
			ph, c := m.ringChannels(in.Channels)
			ringChannels = c
			return ph
		}
		cands = []candidate{{"ring", ring}, {"recursive-doubling", m.recursiveDoubling},
			{"tree", func() []phase { return tree(-1, true, true) }}, {"hierarchical", m.hierarchical}}
	case Broadcast, Reduce:
		up := coll == Reduce
		cands = []candidate{{"chain", func() []phase { return m.confirmed(m.chain(), m.chainParents(), up, false) }},
			{"binomial", func() []phase {
				data := m.binomialUp()
				if !up {
					data = m.binomialDown()
				}
				return m.confirmed(data, m.binomialParents(), up, up)
			}},
			{"tree", func() []phase {
				ph := tree(in.Root, up, !up)
				return m.confirmed(ph, m.treeParents(in.Root, treeChannels), up, false)
			}}}
	default:
		return nil, fmt.Errorf("tune: unknown collective %d", int(coll))
	}
	out := make([]Prediction, len(cands))
	for i, c := range cands {
		phases := c.phases()
		t := m.total(phases)
		out[i] = Prediction{Algorithm: c.name, Time: duration(t), CPU: duration(m.cpuSeconds(phases)), CPUBound: m.cpuBinds(phases)}
		switch {
		case coll == AllReduce && c.name == "ring":
			out[i].Channels = ringChannels
		case c.name == "tree":
			out[i].Channels = treeChannels
			part := in.Bytes / (2 * max(1, treeChannels))
			if tc := TreeChunk(part, in.ChunkBytes); tc < in.ChunkBytes && tc < part {
				out[i].Chunk = tc
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Prediction) int { return cmp.Compare(a.Time, b.Time) })
	breakCPUTie(coll, in, out)
	return out, nil
}

// duration converts seconds to a Duration, saturating at the longest one
// (about 292 years: a prediction beyond it, which the links' bounds allow
// only for calls of many GiB over the slowest links, reads as that).
func duration(seconds float64) time.Duration {
	if ns := math.Round(seconds * 1e9); ns < math.MaxInt64 {
		return time.Duration(max(0, ns))
	}
	return math.MaxInt64
}

// Choose returns the fastest algorithm of coll.
func Choose(coll Collective, in Input) (Prediction, error) {
	p, err := Predict(coll, in)
	if err != nil {
		return Prediction{}, err
	}
	return p[0], nil
}

type candidate struct {
	name   string
	phases func() []phase
}

// ErrInvalid is wrapped by every error about an Input.
var ErrInvalid = errors.New("tune: invalid input")

func (in Input) validate() error {
	if err := in.Topology.Validate(); err != nil {
		return fmt.Errorf("%w: topology: %w", ErrInvalid, err)
	}
	switch {
	case in.Bytes < 0:
		return fmt.Errorf("%w: Bytes %d is negative", ErrInvalid, in.Bytes)
	case in.ChunkBytes <= 0:
		return fmt.Errorf("%w: ChunkBytes %d is not positive", ErrInvalid, in.ChunkBytes)
	case in.Root < 0 || in.Root >= in.Topology.Size():
		return fmt.Errorf("%w: Root %d out of range [0, %d)", ErrInvalid, in.Root, in.Topology.Size())
	case in.Channels < 0 || in.Channels > ChannelsMax:
		return fmt.Errorf("%w: Channels %d out of range [0, %d]", ErrInvalid, in.Channels, ChannelsMax)
	}
	for _, l := range []struct {
		name string
		link Link
	}{{"Host", in.Links.Host}, {"Site", in.Links.Site}, {"WAN", in.Links.WAN}} {
		switch {
		case l.link.Latency < 0 || l.link.Latency > topology.MaxLatency:
			return fmt.Errorf("%w: Links.%s.Latency %v is not in [0, %v]", ErrInvalid, l.name, l.link.Latency, topology.MaxLatency)
		case !(l.link.Bandwidth >= topology.MinBandwidth) || math.IsInf(l.link.Bandwidth, 0):
			return fmt.Errorf("%w: Links.%s.Bandwidth %v is not a finite number >= %g", ErrInvalid, l.name, l.link.Bandwidth, topology.MinBandwidth)
		case l.link.Lanes < 0:
			return fmt.Errorf("%w: Links.%s.Lanes %d is negative", ErrInvalid, l.name, l.link.Lanes)
		case !(l.link.CPUPerByte >= 0 && l.link.CPUPerByte <= topology.MaxCPUPerByte):
			return fmt.Errorf("%w: Links.%s.CPUPerByte %v is not in [0, %g]", ErrInvalid, l.name, l.link.CPUPerByte, topology.MaxCPUPerByte)
		case !(l.link.CPUPerByteBusy >= 0 && l.link.CPUPerByteBusy <= topology.MaxCPUPerByte):
			return fmt.Errorf("%w: Links.%s.CPUPerByteBusy %v is not in [0, %g]", ErrInvalid, l.name, l.link.CPUPerByteBusy, topology.MaxCPUPerByte)
		case l.link.CPUPerMessage < 0 || l.link.CPUPerMessage > topology.MaxCPUPerMessage:
			return fmt.Errorf("%w: Links.%s.CPUPerMessage %v is not in [0, %v]", ErrInvalid, l.name, l.link.CPUPerMessage, topology.MaxCPUPerMessage)
		case l.link.LatencyBusy < 0 || l.link.LatencyBusy > topology.MaxLatency:
			return fmt.Errorf("%w: Links.%s.LatencyBusy %v is not in [0, %v]", ErrInvalid, l.name, l.link.LatencyBusy, topology.MaxLatency)
		case l.link.LatencyCold < 0 || l.link.LatencyCold > topology.MaxLatency:
			return fmt.Errorf("%w: Links.%s.LatencyCold %v is not in [0, %v]", ErrInvalid, l.name, l.link.LatencyCold, topology.MaxLatency)
		}
	}
	if r := in.Links.ReducePerByte; !(r >= 0 && r <= topology.MaxCPUPerByte) {
		return fmt.Errorf("%w: Links.ReducePerByte %v is not in [0, %g]", ErrInvalid, r, topology.MaxCPUPerByte)
	}
	if len(in.Links.Pairs) == 0 {
		return nil // the topology validated above; no second pass for no pairs
	}
	t := in.Topology
	t.Links = &topology.Links{Pairs: in.Links.Pairs}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%w: Links.Pairs: %w", ErrInvalid, err)
	}
	return nil
}
