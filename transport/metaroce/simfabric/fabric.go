package simfabric

import (
	"fmt"
	"time"
)

// NodeID names a node of a Fabric; nodes are numbered from 0 in the order
// they were added.
type NodeID int32

// LinkID names a link of a Fabric, numbered from 0 in the order added.
type LinkID int32

// PathID names a path of a Fabric, numbered from 0 in the order added.
type PathID int32

// Delivery is a packet reaching the end of its path.
type Delivery struct {
	From NodeID        // the path's source node
	To   NodeID        // the path's destination node
	Path PathID        // the path it travelled
	Data []byte        // the packet; the callee owns it and may keep it
	CE   bool          // some link on the path marked it Congestion Experienced
	At   time.Duration // the virtual time of arrival, equal to Fabric.Now()
}

// Fabric is a simulated network in virtual time. It is not safe for
// concurrent use; a simulation runs on one goroutine.
type Fabric struct {
	cfg   Config
	now   time.Duration
	nodes int
	links []*link
	paths []path

	packets  minHeap[packetEvent]
	faults   minHeap[faultEvent]
	seq      uint64
	inFlight int

	advancing bool
}

type path struct {
	from, to NodeID
	links    []LinkID
	stats    Stats
}

// packet is one packet inside the fabric.
type packet struct {
	data  []byte
	path  PathID
	hop   int    // index in the path's links of the link it is on
	epoch uint64 // that link's epoch when the packet entered it
	ce    bool
}

// packetEvent is a packet reaching the far end of the link it is on.
type packetEvent struct {
	at  time.Duration
	seq uint64
	pkt *packet
}

func (e packetEvent) key() (time.Duration, uint64) { return e.at, e.seq }

// New returns an empty Fabric at virtual time 0, or an error if cfg is bad.
func New(cfg Config) (*Fabric, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Fabric{cfg: cfg}, nil
}

// Config returns the fabric's configuration, defaults filled in.
func (f *Fabric) Config() Config { return f.cfg }

// Now returns the current virtual time.
func (f *Fabric) Now() time.Duration { return f.now }

// AddNode adds a node and returns its id.
func (f *Fabric) AddNode() (NodeID, error) {
	if f.nodes >= f.cfg.MaxNodes {
		return 0, fmt.Errorf("%w: MaxNodes=%d", ErrLimit, f.cfg.MaxNodes)
	}
	f.nodes++
	return NodeID(f.nodes - 1), nil
}

// AddLink adds a directed link and returns its id.
func (f *Fabric) AddLink(cfg LinkConfig) (LinkID, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return 0, err
	}
	if len(f.links) >= f.cfg.MaxLinks {
		return 0, fmt.Errorf("%w: MaxLinks=%d", ErrLimit, f.cfg.MaxLinks)
	}
	id := LinkID(len(f.links))
	f.links = append(f.links, newLink(cfg, f.cfg.Seed, id))
	return id, nil
}

// AddPath adds a directed path from one node to another over the given links,
// crossed in order, and returns its id. A path needs at least one link and
// at most MaxHops. Links may be shared by any number of paths.
func (f *Fabric) AddPath(from, to NodeID, links ...LinkID) (PathID, error) {
	if !f.validNode(from) || !f.validNode(to) {
		return 0, fmt.Errorf("%w: node %d or %d", ErrNotFound, from, to)
	}
	if len(links) == 0 || len(links) > f.cfg.MaxHops {
		return 0, fmt.Errorf("%w: path with %d links, want 1 to MaxHops=%d", ErrConfig, len(links), f.cfg.MaxHops)
	}
	for _, l := range links {
		if !f.validLink(l) {
			return 0, fmt.Errorf("%w: link %d", ErrNotFound, l)
		}
	}
	if len(f.paths) >= f.cfg.MaxPaths {
		return 0, fmt.Errorf("%w: MaxPaths=%d", ErrLimit, f.cfg.MaxPaths)
	}
	f.paths = append(f.paths, path{from: from, to: to, links: append([]LinkID(nil), links...)})
	return PathID(len(f.paths) - 1), nil
}

// Connect adds a new link with cfg and a one-link path over it from one node
// to another. It is shorthand for AddLink followed by AddPath.
func (f *Fabric) Connect(from, to NodeID, cfg LinkConfig) (PathID, LinkID, error) {
	if !f.validNode(from) || !f.validNode(to) {
		return 0, 0, fmt.Errorf("%w: node %d or %d", ErrNotFound, from, to)
	}
	l, err := f.AddLink(cfg)
	if err != nil {
		return 0, 0, err
	}
	p, err := f.AddPath(from, to, l)
	return p, l, err
}

// PathEnds returns a path's source and destination nodes.
func (f *Fabric) PathEnds(p PathID) (from, to NodeID, err error) {
	if !f.validPath(p) {
		return 0, 0, fmt.Errorf("%w: path %d", ErrNotFound, p)
	}
	return f.paths[p].from, f.paths[p].to, nil
}

func (f *Fabric) validNode(n NodeID) bool { return n >= 0 && int(n) < f.nodes }
func (f *Fabric) validLink(l LinkID) bool { return l >= 0 && int(l) < len(f.links) }
func (f *Fabric) validPath(p PathID) bool { return p >= 0 && int(p) < len(f.paths) }

// Stats returns a snapshot of every link's and path's counters.
func (f *Fabric) Stats() FabricStats {
	s := FabricStats{Links: make([]Stats, len(f.links)), Paths: make([]Stats, len(f.paths))}
	for i, l := range f.links {
		s.Links[i] = l.stats
	}
	for i := range f.paths {
		s.Paths[i] = f.paths[i].stats
	}
	return s
}

// InFlight returns the number of packets inside the fabric.
func (f *Fabric) InFlight() int { return f.inFlight }
