package collective

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/gocoll/gocoll/collective/tune"
)

// choiceKey is one cached automatic choice: an operation kind, its root
// and the size the model priced (PricedBytes of the call's).
type choiceKey struct {
	kind  Kind
	root  int
	bytes int
}

// pricedBits is how many significant bits of a call's size PricedBytes
// keeps: 8 priced sizes an octave.
const pricedBits = 4

// PricedBytes is the size the cost model prices an automatic choice for a
// call of bytes at: bytes rounded down to its top 4 significant bits. A
// power of two, and any k·2^j with k < 16, is priced exactly (a 16 MiB
// call as 16 MiB); any other size at most 1/8 below itself (the model's
// times grow about linearly with size, so a choice seldom changes within
// that). There are at most 8 priced sizes an octave, so the choices cached
// per kind and root stay few; `gocoll topo --explain SIZE` prices the
// same. Negative bytes give 0.
func PricedBytes(bytes int) int {
	if bytes <= 0 {
		return 0
	}
	drop := bits.Len(uint(bytes)) - pricedBits
	if drop <= 0 {
		return bytes
	}
	return bytes >> drop << drop
}

// modelChoice is one answer of the cost model: the fastest algorithm, the
// ring AllReduce's channels and the trees' (0 where the model has no
// answer).
type modelChoice struct {
	algo     Algorithm
	channels int
	tree     int
}

// modelChannels returns the channels the cost model predicts fastest for
// a ring AllReduce of bytes (with Config.Channels 0), the same on every
// rank; 1 where the topology does not span hosts.
func (c *Comm) modelChannels(bytes int) int {
	return max(1, c.modelChoose(KindAllReduce, bytes, -1).channels)
}

// modelAlgorithm returns the algorithm the cost model (collective/tune)
// predicts fastest for an operation of kind on bytes at root (-1 for
// none) when the communicator's topology spans more than one host; else
// AlgoAuto, and the caller chooses by size. The model runs with the link
// figures of the topology (Config.Topology's Links: a version 2 file's, or
// GOCOLL_PROBE's), tune.DefaultLinks for the levels it lacks, at
// PricedBytes(bytes) and Config.ChunkBytes, once per priced size: the
// answer is a pure function of kind, root and that size, so every rank
// makes the same choice whatever order its calls fill the cache in, and
// the operation headers check that they did.
func (c *Comm) modelAlgorithm(kind Kind, bytes, root int) Algorithm {
	return c.modelChoose(kind, bytes, root).algo
}

// modelChoose is modelAlgorithm's answer with the ring's channels, cached.
func (c *Comm) modelChoose(kind Kind, bytes, root int) modelChoice {
	if c.topo == nil || root < -1 || root >= c.Size() { // a bad root fails validation later
		return modelChoice{}
	}
	if !c.spansHosts() {
		return modelChoice{} // what predict answers, without the cache's hashing per call
	}
	key := choiceKey{kind: kind, root: root, bytes: PricedBytes(bytes)}
	if a, ok := c.choices.Load(key); ok {
		return a.(modelChoice)
	}
	a := c.predict(kind, root, key.bytes)
	c.choices.Store(key, a)
	return a
}

// spansHosts reports whether the communicator's topology (not nil) has
// more than one host, worked out once: on one host the model has no
// answer (predict), and every small call asked the cache for it.
func (c *Comm) spansHosts() bool {
	v := c.hostsSpan.Load()
	if v == 0 {
		v = 1
		if len(c.topo.Hosts()) >= 2 {
			v = 2
		}
		c.hostsSpan.Store(v)
	}
	return v == 2
}

// predict asks the model (with Config.Channels for the ring AllReduce and
// the trees, 0 letting it choose), or returns AlgoAuto where it has no answer.
func (c *Comm) predict(kind Kind, root, bytes int) modelChoice {
	if len(c.topo.Hosts()) < 2 {
		return modelChoice{}
	}
	coll := map[Kind]tune.Collective{KindAllReduce: tune.AllReduce, KindBroadcast: tune.Broadcast, KindReduce: tune.Reduce}[kind]
	ps, err := tune.Predict(coll, tune.Input{Topology: *c.topo, Bytes: bytes, ChunkBytes: c.cfg.ChunkBytes,
		Root: max(root, 0), Links: tune.DefaultLinks(), Channels: c.cfg.Channels})
	if err != nil {
		return modelChoice{}
	}
	a, err := ParseAlgorithm(ps[0].Algorithm)
	if err != nil {
		return modelChoice{}
	}
	mc := modelChoice{algo: a}
	for _, p := range ps {
		switch p.Algorithm {
		case "ring":
			mc.channels = p.Channels
		case "tree":
			mc.tree = p.Channels
		}
	}
	return mc
}

// blockAlgorithm is the algorithm of a ReduceScatter or AllGather of bytes
// in all that Config leaves to auto: hierarchical where the topology spans
// more than one site and the operation is larger than SmallBytes (each
// block then crosses between sites once, every site's ranks at the same
// time, where a ring of rank order may cross at every step), else the
// ring.
func (c *Comm) blockAlgorithm(forced Algorithm, bytes int) Algorithm {
	if forced != AlgoAuto {
		return forced
	}
	if c.topo != nil && bytes > c.cfg.SmallBytes && len(c.topo.Sites()) > 1 {
		return AlgoHierarchical
	}
	return AlgoRing
}

// Algorithms lists the algorithms Config can force for kind: AllReduce,
// Broadcast, Reduce, ReduceScatter and AllGather have a choice; other
// kinds give nil.
func Algorithms(kind Kind) []Algorithm {
	switch kind {
	case KindAllReduce:
		return []Algorithm{AlgoRing, AlgoRecursiveDoubling, AlgoDirect, AlgoTree, AlgoHierarchical, AlgoBoard}
	case KindBroadcast:
		return []Algorithm{AlgoChain, AlgoBinomial, AlgoDirect, AlgoTree, AlgoHierarchical, AlgoBoard}
	case KindReduce:
		return []Algorithm{AlgoChain, AlgoBinomial, AlgoTree}
	case KindReduceScatter, KindAllGather:
		return []Algorithm{AlgoRing, AlgoHierarchical}
	}
	return nil
}

// AlgoSpec forces an algorithm per collective, as Config's fields of the
// same names do; AlgoAuto leaves the choice to the communicator.
type AlgoSpec struct {
	AllReduce, Broadcast, Reduce, ReduceScatter, AllGather Algorithm
}

// AlgoSpecMaxBytes bounds the text ParseAlgoSpec reads.
const AlgoSpecMaxBytes = 256

// ParseAlgoSpec reads a forced choice in the form of GOCOLL_ALGO (like
// NCCL_ALGO): a comma-separated list whose entries are NAME, forcing the
// algorithm on each of AllReduce, Broadcast, Reduce, ReduceScatter and
// AllGather that has it, or COLL:NAME with COLL allreduce, broadcast,
// reduce, reducescatter or allgather; later entries win.
// Names are ParseAlgorithm's; "" forces nothing. For example "tree" or
// "allreduce:hierarchical,broadcast:chain". An unknown name, a
// collective without the algorithm, or a NAME no collective has is an
// error naming the entry.
func ParseAlgoSpec(s string) (AlgoSpec, error) {
	var spec AlgoSpec
	if len(s) > AlgoSpecMaxBytes {
		return spec, fmt.Errorf("collective: algorithm list of %d bytes, more than %d", len(s), AlgoSpecMaxBytes)
	}
	if strings.TrimSpace(s) == "" {
		return spec, nil
	}
	fields := []struct {
		name string
		kind Kind
		algo *Algorithm
	}{{"allreduce", KindAllReduce, &spec.AllReduce}, {"broadcast", KindBroadcast, &spec.Broadcast}, {"reduce", KindReduce, &spec.Reduce},
		{"reducescatter", KindReduceScatter, &spec.ReduceScatter}, {"allgather", KindAllGather, &spec.AllGather}}
	for _, entry := range strings.Split(s, ",") {
		coll, name, scoped := strings.Cut(strings.TrimSpace(entry), ":")
		if !scoped {
			coll, name = "", coll
		}
		a, err := ParseAlgorithm(strings.ToLower(strings.TrimSpace(name)))
		if err != nil {
			return AlgoSpec{}, fmt.Errorf("collective: algorithm list entry %q: unknown algorithm %q", entry, name)
		}
		coll = strings.ToLower(strings.TrimSpace(coll))
		matched := false
		for _, f := range fields {
			if scoped && coll != f.name {
				continue
			}
			if a == AlgoAuto || slices.Contains(Algorithms(f.kind), a) {
				*f.algo, matched = a, true
			} else if scoped {
				return AlgoSpec{}, fmt.Errorf("collective: algorithm list entry %q: %s has no algorithm %v (it has %v)", entry, f.name, a, Algorithms(f.kind))
			}
		}
		if !matched && scoped {
			return AlgoSpec{}, fmt.Errorf("collective: algorithm list entry %q: unknown collective %q (want allreduce, broadcast, reduce, reducescatter or allgather)", entry, coll)
		}
		if !matched {
			return AlgoSpec{}, fmt.Errorf("collective: algorithm list entry %q: no collective has algorithm %v", entry, a)
		}
	}
	return spec, nil
}

// Apply sets the algorithms spec forces on the fields cfg leaves to auto.
func (spec AlgoSpec) Apply(cfg *Config) {
	for _, f := range []struct{ from, to *Algorithm }{{&spec.AllReduce, &cfg.AllReduce}, {&spec.Broadcast, &cfg.Broadcast},
		{&spec.Reduce, &cfg.Reduce}, {&spec.ReduceScatter, &cfg.ReduceScatter}, {&spec.AllGather, &cfg.AllGather}} {
		if *f.to == AlgoAuto {
			*f.to = *f.from
		}
	}
}
