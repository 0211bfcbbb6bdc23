package collective

import (
	"sync"

	"github.com/gocoll/gocoll/collective/tune"
)

// rootedShapes bounds the rooted trees' shapes (Broadcast, Reduce) a
// communicator keeps: a few roots in turn hit, and a root that rotates
// over all ranks costs one set of shapes a call, not one kept per root
// (2 × channels trees of Size() ranks each: at 1024 ranks, every root
// kept took over 100 MiB).
const rootedShapes = 4

// shapeCache keeps the trees' shapes a communicator made (Comm.trees),
// read-only once made: AllReduce's (root -1) for each channel count up to
// tune.ChannelsMax, and the rootedShapes least recently made or used
// rooted ones. Others are made at every call.
type shapeCache struct {
	mu     sync.Mutex
	all    [tune.ChannelsMax + 1][]treeShape // by channels
	rooted [rootedShapes]rootedShape
	clock  uint64 // the last use's stamp
}

// rootedShape is one rooted entry: its key, its shapes (nil: empty) and
// the stamp of its last use.
type rootedShape struct {
	root, channels int
	shapes         []treeShape
	used           uint64
}

// get returns the shapes of (root, channels), which build makes where
// they are not kept.
func (s *shapeCache) get(root, channels int, build func(root, channels int) []treeShape) []treeShape {
	s.mu.Lock()
	defer s.mu.Unlock()
	if root < 0 {
		if channels < 1 || channels >= len(s.all) {
			return build(root, channels)
		}
		if s.all[channels] == nil {
			s.all[channels] = build(root, channels)
		}
		return s.all[channels]
	}
	s.clock++
	lru := 0
	for i := range s.rooted {
		e := &s.rooted[i]
		if e.shapes != nil && e.root == root && e.channels == channels {
			e.used = s.clock
			return e.shapes
		}
		if e.used < s.rooted[lru].used {
			lru = i
		}
	}
	s.rooted[lru] = rootedShape{root: root, channels: channels, shapes: build(root, channels), used: s.clock}
	return s.rooted[lru].shapes
}

// kept is the number of sets of shapes kept.
func (s *shapeCache) kept() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sh := range s.all {
		if sh != nil {
			n++
		}
	}
	for _, e := range s.rooted {
		if e.shapes != nil {
			n++
		}
	}
	return n
}
