package simfabric

// Count is a number of packets and their total size in bytes.
type Count struct {
	Packets int64
	Bytes   int64
}

func (c *Count) add(bytes int) {
	c.Packets++
	c.Bytes += int64(bytes)
}

// Plus returns the sum of c and d.
func (c Count) Plus(d Count) Count {
	return Count{Packets: c.Packets + d.Packets, Bytes: c.Bytes + d.Bytes}
}

// Stats counts what happened to the packets of one link or one path. For
// both, every packet that entered (Sent, plus Duplicated copies made) is
// either Delivered, Dropped, or still in flight.
type Stats struct {
	// Sent counts packets that entered: passed to Send for a path, offered
	// to the link's queue for a link.
	Sent Count
	// Delivered counts packets that left: handed to the deliver callback for
	// a path; passed on to the next link or the destination for a link.
	Delivered Count

	// DroppedQueueFull counts tail drops at a full queue.
	DroppedQueueFull Count
	// DroppedLoss counts random losses (LinkConfig.Loss).
	DroppedLoss Count
	// DroppedCut counts packets that entered a cut link or were on a link
	// when it was cut; the latter are counted at the time they would have
	// left the link.
	DroppedCut Count

	// Corrupted counts packets with a bit flipped (LinkConfig.Corrupt).
	Corrupted Count
	// Duplicated counts the extra copies made (LinkConfig.Dup).
	Duplicated Count
	// ECNMarked counts, for a link, the packets it marked CE; for a path,
	// the delivered packets that carried CE.
	ECNMarked Count

	// MaxQueueBytes is the largest queue occupancy seen on a link, counting
	// the arriving packet. Always 0 for a path and for a link without a
	// Rate.
	MaxQueueBytes int
}

// Dropped returns the sum of all drop counts.
func (s Stats) Dropped() Count {
	return s.DroppedQueueFull.Plus(s.DroppedLoss).Plus(s.DroppedCut)
}

// InFlight returns the packets that entered and neither left nor were
// dropped: Sent + Duplicated - Delivered - Dropped.
func (s Stats) InFlight() Count {
	in := s.Sent.Plus(s.Duplicated)
	out := s.Delivered.Plus(s.Dropped())
	return Count{Packets: in.Packets - out.Packets, Bytes: in.Bytes - out.Bytes}
}

// FabricStats is a snapshot of every link's and path's Stats, indexed by
// LinkID and PathID.
type FabricStats struct {
	Links []Stats
	Paths []Stats
}

// dropReason says why a packet was dropped.
type dropReason uint8

const (
	dropQueueFull dropReason = iota
	dropLoss
	dropCut
)

func (s *Stats) drop(r dropReason, bytes int) {
	switch r {
	case dropQueueFull:
		s.DroppedQueueFull.add(bytes)
	case dropLoss:
		s.DroppedLoss.add(bytes)
	case dropCut:
		s.DroppedCut.add(bytes)
	default:
		panic("simfabric: unknown drop reason")
	}
}
