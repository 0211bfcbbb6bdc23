package collective

import (
	"math/bits"

	"github.com/gocoll/gocoll/collective/tune"
)

// choiceKey is one cached automatic choice: an operation kind, its root
// and its size class (bits.Len of the byte count).
type choiceKey struct {
	kind  Kind
	root  int
	class int
}

// modelAlgorithm returns the algorithm the cost model (collective/tune)
// predicts fastest for an operation of kind on bytes at root (-1 for
// none) when the communicator's topology spans more than one host; else
// AlgoAuto, and the caller chooses by size. The model runs with tune.DefaultLinks
// (link figures are neither configured nor measured yet) at the largest
// size of the operation's power-of-two class, once per class: every rank
// makes the same choice whatever order its calls fill the cache in, and
// the operation headers check that they did.
func (c *Comm) modelAlgorithm(kind Kind, bytes, root int) Algorithm {
	if c.topo == nil || root < -1 || root >= c.Size() { // a bad root fails validation later
		return AlgoAuto
	}
	key := choiceKey{kind: kind, root: root, class: bits.Len(uint(bytes))}
	if a, ok := c.choices.Load(key); ok {
		return a.(Algorithm)
	}
	a := c.predict(kind, root, (1<<key.class)-1)
	c.choices.Store(key, a)
	return a
}

// predict asks the model, or returns AlgoAuto where it has no answer.
func (c *Comm) predict(kind Kind, root, bytes int) Algorithm {
	if len(c.topo.Hosts()) < 2 {
		return AlgoAuto
	}
	coll := map[Kind]tune.Collective{KindAllReduce: tune.AllReduce, KindBroadcast: tune.Broadcast, KindReduce: tune.Reduce}[kind]
	p, err := tune.Choose(coll, tune.Input{Topology: *c.topo, Bytes: bytes, ChunkBytes: c.cfg.ChunkBytes,
		Root: max(root, 0), Links: tune.DefaultLinks()})
	if err != nil {
		return AlgoAuto
	}
	a, err := ParseAlgorithm(p.Algorithm)
	if err != nil {
		return AlgoAuto
	}
	return a
}
