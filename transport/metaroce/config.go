package metaroce

import (
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// Config configures an [Endpoint]. A zero field takes its documented
// default; a field outside its documented range makes [NewEndpoint] fail.
type Config struct {
	// NodeID identifies this endpoint to its peers (for example its rank);
	// it is sent in HELLO and reported as Event.Peer by the accepting side.
	NodeID uint64
	// IDSeed seeds the connection ids this endpoint hands out. Use a random
	// value in production so that a restarted process does not reuse ids;
	// any fixed value keeps simulations reproducible.
	IDSeed uint64

	// Paths is the number of paths a connection offers, 1 to 256. Default 4.
	// A connection uses the smaller of its two sides' values.
	Paths int
	// MaxDatagram is the largest datagram sent or accepted, in bytes, from
	// 256 to 65507. Default 1452. A connection uses the smaller of its two
	// sides' values; a DATA piece carries MaxDatagram - wire.DataOverhead
	// bytes of message.
	MaxDatagram int

	// MaxConns bounds the connections of the endpoint. Default 1024, at
	// most 1<<20.
	MaxConns int
	// MaxSends bounds the messages queued or in flight for sending on one
	// connection; Send fails with ErrLimit beyond it. Default 4096, at most
	// 1<<20.
	MaxSends int
	// MaxRecvs bounds the posted receives not yet matched on one
	// connection; PostRecv fails with ErrLimit beyond it. Default 4096, at
	// most 1<<20.
	MaxRecvs int
	// MsgWindow bounds the messages a peer may have started on a connection
	// that this side has not finished (matched and complete, or discarded);
	// it bounds the receiver's per-message state. Default 4096, from 16 to
	// 1<<20.
	MsgWindow int
	// UnexpectedBytes is the per-connection budget for message bytes that
	// arrive before their receive is posted. The peer may send at most this
	// many such bytes ahead of what this side has consumed (the credit).
	// Default 4 MiB, from 0 to 1<<34. It is where the budget starts: see
	// UnexpectedMax.
	UnexpectedBytes int64
	// UnexpectedMax is the most the unexpected budget grows to. On a long
	// fat path a sender whose messages are unconfirmed for a round trip
	// (each is matched only when its first piece arrives) is held to the
	// budget a round trip; so when more than half of the budget arrives
	// for posted receives within a round trip while nothing unexpected is
	// held, the budget grows to twice what so arrived (the bandwidth-delay
	// product the sender reached), up to UnexpectedMax. It never shrinks
	// while the connection lives. The growth is shared: over all open
	// connections the budgets grow by at most UnexpectedMax -
	// UnexpectedBytes together, so the endpoint holds at most MaxConns x
	// UnexpectedBytes + UnexpectedMax unexpected bytes. Default the larger
	// of 64 MiB and UnexpectedBytes; from UnexpectedBytes to 1<<34.
	UnexpectedMax int64
	// RemnantBytes bounds, over the whole endpoint, the bytes of the whole
	// messages kept from connections that ended (see ConnStats): each
	// keeps at most its budget (UnexpectedMax), and at most MaxConns of them are
	// kept. When a connection that ends brings the total above it, the
	// oldest ended connections' messages are forgotten first (the newest
	// too if it alone exceeds it): a receive posted for one of them then
	// fails with the error that ended its connection, and
	// EndpointStats.RemnantDropped counts the bytes. Default the larger of
	// 64 MiB and UnexpectedMax, at most 1<<40; negative keeps none.
	RemnantBytes int64

	// RecvCapacity is this endpoint's receive capacity in bytes/s (of
	// datagrams), divided equally among the connections that sent data
	// within SenderIdle; each sender learns its share in every ACK.
	// 0 (default) means measured: unlimited (ACKs carry no limit) until the
	// endpoint sees a queue standing in front of it while two or more
	// senders are active; the highest aggregate arrival rate seen in such
	// an interval is the capacity from then on. Negative means never limit.
	RecvCapacity int64
	// SenderIdle is how long after its last DATA a sender still counts as
	// active for the rate share. Default 1ms.
	SenderIdle time.Duration

	// InitialWindow is a connection's first congestion window in packets,
	// shared among its paths (each gets at least one). It is what a
	// connection sends before its first ACK, so it bounds the burst that
	// many connections opening at once put into the fabric. Default 16,
	// from 1 to 256.
	InitialWindow int
	// DelayTarget is how far a path's RTT may rise above its minimum before
	// the path's window is cut; the target used is the larger of this and
	// half the path's base RTT, capped at 5 ms (buffers hold a bounded
	// time of their rate). Default 20µs.
	DelayTarget time.Duration
	// InitialRTT is the RTT assumed before the handshake measures one: the
	// first HELLO is resent after 2 InitialRTT, doubling. No data is sent
	// before the handshake, whose round trip then seeds every path's RTT
	// (deviation half of it, at least InitialRTT/2) until the path's own
	// first sample. Default 1ms.
	InitialRTT time.Duration
	// MinRTO and MaxRTO bound the retransmission timeout, which is a
	// path's srtt + 4 rttvar (at least srtt/4) + AckDelay, doubling with
	// each timeout until an ACK of new data. MaxRTO bounds the doubling
	// only: no bound makes a path time out within srtt + 4 rttvar.
	// Defaults 200µs and 1s.
	MinRTO, MaxRTO time.Duration
	// DeadAfter is the number of unanswered probes, one per RTO, after
	// which a suspect path is declared dead. Default 3, from 1 to 100.
	DeadAfter int
	// ProbeInterval is how often a dead path is probed: at least its RTO,
	// doubling with each unanswered probe up to 8 times. A reply to any
	// probe sent since the path went suspect revives it. Default 10ms.
	ProbeInterval time.Duration
	// AckEvery is the number of DATA packets after which an ACK is sent at
	// once. Default 2, from 1 to 64.
	AckEvery int
	// AckDelay is the longest an ACK is held back on a connection of RTT
	// under 1 ms; on longer ones an ACK is held up to an eighth of the RTT,
	// at most 250µs, but never less than AckDelay (see the package
	// documentation). Default 20µs.
	AckDelay time.Duration
	// DelaySmallAcks lets the receiver hold the ACK of a one-piece
	// message for up to AckDelay (as for any other piece), so that one ACK
	// covers the small messages that arrive together, instead of sending
	// it at once. The send then completes up to AckDelay later; a driver
	// that completes small sends by copying them (mrtransport's eager
	// sends) does not wait for it. Default off: the last piece of every
	// message is acknowledged at once.
	DelaySmallAcks bool
	// PiggybackAcks lets an ACK that waits for its delay ride on a DATA
	// packet to the same peer (flag wire.FlagAck) instead of going alone,
	// when it fits in the datagram; with DelaySmallAcks and traffic both
	// ways, most ACKs then cost no datagram. Both sides must run a version
	// that reads it (every version with wire.FlagAck). Default off.
	PiggybackAcks bool
	// AckRoom asks the peer, in the handshake, to cut the connection's
	// DATA pieces wire.AckRoomLen bytes (158) short of the datagram, so
	// that a full piece too can carry the ACK its sender owes
	// (PiggybackAcks) when that ACK reports at most two paths. It takes
	// effect where both sides ask (wire.FlagAckRoom in HELLO and
	// HELLO-ACK) and the connection's datagram is at least
	// wire.AckRoomMinDatagram; the pieces are then 1.8 % shorter at a
	// 9000-byte datagram. On a connection with DATA both ways, such as a
	// hierarchical AllReduce's WAN connections, most ACKs then ride on
	// DATA instead of costing a datagram, a write and a wake-up each. A
	// peer of a version before wire.FlagAckRoom rejects a HELLO that asks
	// (its parser took no HELLO flag): mixed versions must leave it off.
	// Default off.
	AckRoom bool
	// IdleTimeout fails a connection that has received nothing valid for
	// this long (keepalive probes are sent at a quarter of it, at a
	// sixteenth, or PeerTimeout/8 if shorter, while a send or a receive
	// waits on the peer). It also bounds connection set-up. Default 10s.
	IdleTimeout time.Duration
	// PeerTimeout fails an open connection whose peer has answered nothing
	// on any path (no packet at all: data, ACK, probe reply) for this long
	// after a probe, while something waits on it: a send queued or in
	// flight, or a receive posted. Its operations and EventClosed then
	// fail with a *PeerTimeoutError, which is ErrPeerGone and
	// ErrPeerTimeout. The silence counts from the first probe left
	// unanswered, or from a tenth of PeerTimeout after the last packet
	// heard if that is sooner. While something waits, the connection
	// probes the peer every PeerTimeout/8 (every path once it has been
	// silent for PeerTimeout/2), so a live peer, which answers probes
	// whatever its application does, is not failed, nor one whose process
	// was not running for less than PeerTimeout (a loaded host; see
	// ask.go); and a peer that is gone is failed within PeerTimeout plus a
	// tenth of the last packet heard from it. A connection with nothing
	// waiting is left to IdleTimeout.
	// Default 2s, from 1ms to 1h; it acts only if shorter than
	// IdleTimeout. The time this endpoint comes late to its own timers
	// (its process went unscheduled on a loaded machine, when it could
	// neither hear nor answer) does not count as the peer's silence, for
	// this or for IdleTimeout (EndpointStats.Late).
	PeerTimeout time.Duration

	// PayloadUnchecked leaves the payload out of DATA packets' CRC32C
	// (wire.FlagPayloadUnchecked); headers, fields and piggybacked ACKs
	// stay covered. Only for links that cannot damage data, such as
	// loopback, where the kernel skips the UDP checksum too: the CRC would
	// cost a pass over every byte sent and received and protect nothing.
	// The receiver accepts both forms. Default off.
	PayloadUnchecked bool

	// ReportUnexpected turns on EventUnexpected, so that a driver can
	// discard messages nobody will receive (those of an aborted
	// operation) instead of leaving them to fill the message window and
	// the unexpected budget. Default off.
	ReportUnexpected bool

	// Auth authenticates the connections with a job key (see AuthMode).
	// The zero value: no key, no authentication.
	Auth AuthConfig
}

// DefaultPeerTimeout is Config.PeerTimeout when it is 0.
const DefaultPeerTimeout = 2 * time.Second

// Limits of Config fields.
const (
	minPeerTimeout = time.Millisecond
	MaxPaths       = 256
	minDatagram    = wire.MinDatagram
	maxDatagram    = wire.MaxDatagram
	maxConnsLimit  = 1 << 20
	maxQueueLimit  = 1 << 20
	maxBudget      = 1 << 34
	minMsgWindow   = 16
	maxWindowPkts  = maxRing // a path's window, in packets
	maxInitialPkts = 256
	maxDeadAfter   = 100
	maxAckEvery    = 64
	defaultBudget  = 4 << 20
	// defaultBudgetMax is UnexpectedMax's default: 100 ms at 5 Gbit/s.
	defaultBudgetMax = 64 << 20
	// RemnantBytes: default (at least) and limit.
	defaultRemnantBytes = 64 << 20
	maxRemnantBytes     = 1 << 40
	defaultMaxQueue     = 4096
)

// withDefaults returns c with zero fields replaced by defaults, or an error
// naming the first field out of range.
func (c Config) withDefaults() (Config, error) {
	ints := []struct {
		name          string
		v             *int
		def, min, max int
	}{
		{"Paths", &c.Paths, 4, 1, MaxPaths},
		{"MaxDatagram", &c.MaxDatagram, 1452, minDatagram, maxDatagram},
		{"MaxConns", &c.MaxConns, 1024, 1, maxConnsLimit},
		{"MaxSends", &c.MaxSends, defaultMaxQueue, 1, maxQueueLimit},
		{"MaxRecvs", &c.MaxRecvs, defaultMaxQueue, 1, maxQueueLimit},
		{"MsgWindow", &c.MsgWindow, defaultMaxQueue, minMsgWindow, maxQueueLimit},
		{"InitialWindow", &c.InitialWindow, 16, 1, maxInitialPkts},
		{"DeadAfter", &c.DeadAfter, 3, 1, maxDeadAfter},
		{"AckEvery", &c.AckEvery, 2, 1, maxAckEvery},
	}
	for _, f := range ints {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < f.min || *f.v > f.max {
			return c, fmt.Errorf("%w: %s=%d not in [%d, %d]", ErrConfig, f.name, *f.v, f.min, f.max)
		}
	}
	durs := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"SenderIdle", &c.SenderIdle, time.Millisecond},
		{"DelayTarget", &c.DelayTarget, 20 * time.Microsecond},
		{"InitialRTT", &c.InitialRTT, time.Millisecond},
		{"MinRTO", &c.MinRTO, 200 * time.Microsecond},
		{"MaxRTO", &c.MaxRTO, time.Second},
		{"ProbeInterval", &c.ProbeInterval, 10 * time.Millisecond},
		{"AckDelay", &c.AckDelay, 20 * time.Microsecond},
		{"IdleTimeout", &c.IdleTimeout, 10 * time.Second},
		{"PeerTimeout", &c.PeerTimeout, DefaultPeerTimeout},
	}
	for _, f := range durs {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 || *f.v > time.Hour {
			return c, fmt.Errorf("%w: %s=%v not in (0, 1h]", ErrConfig, f.name, *f.v)
		}
	}
	if c.UnexpectedBytes == 0 {
		c.UnexpectedBytes = defaultBudget
	}
	if c.UnexpectedMax == 0 {
		c.UnexpectedMax = max(defaultBudgetMax, c.UnexpectedBytes)
	}
	switch {
	case c.RemnantBytes == 0:
		c.RemnantBytes = max(defaultRemnantBytes, c.UnexpectedMax)
	case c.RemnantBytes < 0:
		c.RemnantBytes = 0
	case c.RemnantBytes > maxRemnantBytes:
		return c, fmt.Errorf("%w: RemnantBytes=%d above %d", ErrConfig, c.RemnantBytes, int64(maxRemnantBytes))
	}
	switch {
	case c.UnexpectedBytes < 0 || c.UnexpectedBytes > maxBudget:
		return c, fmt.Errorf("%w: UnexpectedBytes=%d not in [0, %d]", ErrConfig, c.UnexpectedBytes, int64(maxBudget))
	case c.UnexpectedMax < c.UnexpectedBytes || c.UnexpectedMax > maxBudget:
		return c, fmt.Errorf("%w: UnexpectedMax=%d not in [UnexpectedBytes=%d, %d]", ErrConfig, c.UnexpectedMax, c.UnexpectedBytes, int64(maxBudget))
	case c.MinRTO > c.MaxRTO:
		return c, fmt.Errorf("%w: MinRTO=%v above MaxRTO=%v", ErrConfig, c.MinRTO, c.MaxRTO)
	case c.PeerTimeout < minPeerTimeout:
		return c, fmt.Errorf("%w: PeerTimeout=%v below %v", ErrConfig, c.PeerTimeout, minPeerTimeout)
	}
	auth, err := c.Auth.withDefaults()
	c.Auth = auth
	return c, err
}
