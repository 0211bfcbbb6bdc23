package simfabric

import (
	"errors"
	"fmt"
	"time"
)

// Config configures a [Fabric]. A zero field takes its documented default;
// a negative field, or one above its hard limit, is an error from [New].
type Config struct {
	// Seed seeds every random choice of the run (loss, duplication,
	// corruption, jitter, reordering). Each link draws from its own stream
	// derived from Seed and its LinkID, so traffic on one link does not
	// perturb the random choices on another.
	Seed int64

	// MaxNodes bounds AddNode. Default 1024, limit 1<<16.
	MaxNodes int
	// MaxLinks bounds AddLink. Default 4096, limit 1<<20.
	MaxLinks int
	// MaxPaths bounds AddPath. Default 1<<16, limit 1<<20.
	MaxPaths int
	// MaxHops bounds the number of links in one path. Default 8, limit 64.
	MaxHops int
	// MaxPacketBytes bounds the size of a sent packet. Default 65535 (the
	// largest UDP payload), limit 1<<20.
	MaxPacketBytes int
	// MaxPacketsInFlight bounds the packets inside the fabric (queued or
	// propagating, duplicates included). Send fails with ErrFull beyond it,
	// and a duplicate that would exceed it is not made. Default 1<<20,
	// limit 1<<26.
	MaxPacketsInFlight int
	// MaxFaults bounds the faults scheduled and not yet applied. Default
	// 1<<16, limit 1<<20.
	MaxFaults int
	// MaxEventsPerInstant bounds the events AdvanceTo processes at one
	// virtual instant; beyond it AdvanceTo stops with ErrLivelock. This
	// catches endpoints that answer each other forever over zero-delay,
	// infinite-rate links. Default 1<<20, limit 1<<30.
	MaxEventsPerInstant int
}

// Defaults and hard limits of Config and LinkConfig fields.
const (
	DefaultMaxNodes            = 1024
	DefaultMaxLinks            = 4096
	DefaultMaxPaths            = 1 << 16
	DefaultMaxHops             = 8
	DefaultMaxPacketBytes      = 65535
	DefaultMaxPacketsInFlight  = 1 << 20
	DefaultMaxFaults           = 1 << 16
	DefaultMaxEventsPerInstant = 1 << 20

	LimitMaxNodes            = 1 << 16
	LimitMaxLinks            = 1 << 20
	LimitMaxPaths            = 1 << 20
	LimitMaxHops             = 64
	LimitMaxPacketBytes      = 1 << 20
	LimitMaxPacketsInFlight  = 1 << 26
	LimitMaxFaults           = 1 << 20
	LimitMaxEventsPerInstant = 1 << 30

	// DefaultQueueBytes is a link's queue size when LinkConfig.QueueBytes is 0.
	DefaultQueueBytes = 1 << 20
	// LimitQueueBytes is the largest LinkConfig.QueueBytes.
	LimitQueueBytes = 1 << 30
	// LimitRate is the largest LinkConfig.Rate in bytes/s (80 Tbit/s).
	LimitRate = 10_000_000_000_000
	// LimitDelay bounds LinkConfig.Delay, Jitter and ReorderDelay each.
	LimitDelay = time.Hour
	// DefaultReorderDelay is LinkConfig.ReorderDelay when it is 0.
	DefaultReorderDelay = 50 * time.Microsecond
	// LimitLossTrain bounds LinkConfig.LossTrain (a GSO send holds at
	// most 64 segments).
	LimitLossTrain = 64
)

// Errors returned by the Fabric. Test with errors.Is.
var (
	ErrConfig     = errors.New("simfabric: bad configuration")
	ErrLimit      = errors.New("simfabric: limit reached")
	ErrFull       = errors.New("simfabric: too many packets in flight")
	ErrNotFound   = errors.New("simfabric: no such node, link or path")
	ErrPast       = errors.New("simfabric: time is in the past")
	ErrReentrant  = errors.New("simfabric: AdvanceTo called from its deliver callback")
	ErrLivelock   = errors.New("simfabric: too many events at one instant")
	ErrPacketSize = errors.New("simfabric: packet larger than MaxPacketBytes")
)

// withDefaults returns c with zero fields replaced by their defaults, or an
// error naming the first bad field.
func (c Config) withDefaults() (Config, error) {
	fields := []struct {
		name       string
		v          *int
		def, limit int
	}{
		{"MaxNodes", &c.MaxNodes, DefaultMaxNodes, LimitMaxNodes},
		{"MaxLinks", &c.MaxLinks, DefaultMaxLinks, LimitMaxLinks},
		{"MaxPaths", &c.MaxPaths, DefaultMaxPaths, LimitMaxPaths},
		{"MaxHops", &c.MaxHops, DefaultMaxHops, LimitMaxHops},
		{"MaxPacketBytes", &c.MaxPacketBytes, DefaultMaxPacketBytes, LimitMaxPacketBytes},
		{"MaxPacketsInFlight", &c.MaxPacketsInFlight, DefaultMaxPacketsInFlight, LimitMaxPacketsInFlight},
		{"MaxFaults", &c.MaxFaults, DefaultMaxFaults, LimitMaxFaults},
		{"MaxEventsPerInstant", &c.MaxEventsPerInstant, DefaultMaxEventsPerInstant, LimitMaxEventsPerInstant},
	}
	for _, f := range fields {
		switch {
		case *f.v < 0 || *f.v > f.limit:
			return c, fmt.Errorf("%w: %s=%d not in [0, %d]", ErrConfig, f.name, *f.v, f.limit)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	return c, nil
}

// LinkConfig configures one directed link. It is plain data: the zero value
// is a perfect link (infinite rate, no delay, no faults) with the default
// queue size.
type LinkConfig struct {
	// Rate is the transmitter's rate in bytes per second; a packet of n
	// bytes takes n/Rate to serialise, and packets queue FIFO behind each
	// other. 0 means infinite (no serialisation delay, no queueing).
	// At most LimitRate.
	Rate int64
	// Delay is the propagation delay added after serialisation.
	// In [0, LimitDelay].
	Delay time.Duration
	// Jitter adds a uniform random extra delay in [0, Jitter] to each packet.
	// Jitter alone never reorders: a packet never arrives before one that
	// left the link before it (except reordered ones, below).
	// In [0, LimitDelay].
	Jitter time.Duration
	// QueueBytes bounds the bytes queued at the link (the packet being
	// serialised included). A packet that would exceed it is dropped (tail
	// drop); so is any packet larger than it. Default DefaultQueueBytes,
	// at most LimitQueueBytes. A link without a Rate has no queue: it
	// never drops for a full queue nor marks ECN.
	QueueBytes int
	// ECNThresholdBytes marks a packet Congestion Experienced when the bytes
	// already queued ahead of it on arrival exceed it (the packet being
	// serialised counts whole). 0 turns marking off; otherwise it must be
	// below QueueBytes.
	ECNThresholdBytes int
	// Loss is the probability that a packet is lost on the wire after
	// serialisation (it still uses the link's time). In [0, 1].
	Loss float64
	// LossTrain, above 1, makes Loss fall on trains instead of packets:
	// packets of one path that enter the link one after the other at the
	// same instant (a sender's GSO send) form trains of up to LossTrain
	// packets, and each train is lost or kept whole, by one draw. This is
	// how an emulator that drops GSO packets before segmenting them loses
	// (the lab did, with up to 7 datagrams of 9000 bytes a train). 0 or 1:
	// per packet. In [0, LimitLossTrain].
	LossTrain int
	// Dup is the probability that a packet leaving the link is duplicated.
	// The copy travels on independently (with its own jitter and reorder
	// draws) but does not use the link's time. In [0, 1].
	Dup float64
	// Corrupt is the probability that one random bit of the packet is
	// flipped on this link. Only the fabric's own copy changes, never the
	// sender's buffer. In [0, 1].
	Corrupt float64
	// Reorder is the probability that a packet gets ReorderDelay extra
	// delay, so later packets overtake it. In [0, 1].
	Reorder float64
	// ReorderDelay is the extra delay of a reordered packet. Default
	// DefaultReorderDelay, at most LimitDelay.
	ReorderDelay time.Duration
}

// withDefaults returns c with zero fields replaced by their defaults, or an
// error naming the first bad field.
func (c LinkConfig) withDefaults() (LinkConfig, error) {
	if c.QueueBytes == 0 {
		c.QueueBytes = DefaultQueueBytes
	}
	if c.ReorderDelay == 0 {
		c.ReorderDelay = DefaultReorderDelay
	}
	bad := func(format string, args ...any) (LinkConfig, error) {
		return c, fmt.Errorf("%w: link "+format, append([]any{ErrConfig}, args...)...)
	}
	switch {
	case c.Rate < 0 || c.Rate > LimitRate:
		return bad("Rate=%d not in [0, %d]", c.Rate, int64(LimitRate))
	case c.QueueBytes < 0 || c.QueueBytes > LimitQueueBytes:
		return bad("QueueBytes=%d not in [0, %d]", c.QueueBytes, LimitQueueBytes)
	case c.LossTrain < 0 || c.LossTrain > LimitLossTrain:
		return bad("LossTrain=%d not in [0, %d]", c.LossTrain, LimitLossTrain)
	case c.ECNThresholdBytes < 0 || (c.ECNThresholdBytes > 0 && c.ECNThresholdBytes >= c.QueueBytes):
		return bad("ECNThresholdBytes=%d not 0 or in [1, QueueBytes=%d)", c.ECNThresholdBytes, c.QueueBytes)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Delay", c.Delay}, {"Jitter", c.Jitter}, {"ReorderDelay", c.ReorderDelay}} {
		if d.v < 0 || d.v > LimitDelay {
			return bad("%s=%v not in [0, %v]", d.name, d.v, LimitDelay)
		}
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"Loss", c.Loss}, {"Dup", c.Dup}, {"Corrupt", c.Corrupt}, {"Reorder", c.Reorder}} {
		if !(p.v >= 0 && p.v <= 1) { // also rejects NaN
			return bad("%s=%v not in [0, 1]", p.name, p.v)
		}
	}
	return c, nil
}
