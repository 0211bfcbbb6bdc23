package tcp

import (
	"fmt"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// Limits of the configuration and of the wire protocol.
const (
	// MaxConnsPerPeer is the largest allowed Config.ConnsPerPeer.
	MaxConnsPerPeer = 16
	// MaxEagerLimit is the largest allowed Config.EagerLimit (and the
	// largest eager body a receiver accepts).
	MaxEagerLimit = 4 << 20
	// MaxChunkBytes is the largest allowed Config.ChunkBytes (and the largest
	// rendezvous data frame a receiver accepts).
	MaxChunkBytes = 16 << 20
	// MaxWorldSize is the largest number of ranks Connect accepts.
	MaxWorldSize = 1 << 16
	// MaxMessageBytes is the largest message the protocol can describe.
	MaxMessageBytes = 1 << 40
	// MaxReasonBytes is the longest abort reason sent to peers; longer
	// reasons are cut.
	MaxReasonBytes = 1024
	// maxSocketBufferBytes bounds Config.SocketBufferBytes.
	maxSocketBufferBytes = 256 << 20
)

// Config configures a [Listener] and the [Endpoint] it connects. The zero
// value of every field selects its default; Listen reports a field out of
// its documented range as an error.
type Config struct {
	// Rank is this endpoint's rank, in [0, len(addrs)) of Connect.
	Rank int
	// JobID names the world. Every rank must use the same value; a
	// connection that claims another job is refused. Default 0.
	JobID uint64
	// ListenAddr is the address Listen binds. Default "127.0.0.1:0".
	ListenAddr string
	// ConnsPerPeer is the number of TCP connections to each peer, in
	// [1, MaxConnsPerPeer]. Default 1. Control frames and eager messages use
	// the first connection; rendezvous data is striped over all of them.
	ConnsPerPeer int
	// SocketBufferBytes sets SO_SNDBUF and SO_RCVBUF of every socket, at
	// most 256 MiB (the kernel may cap it lower: net.core.rmem_max). Default
	// 4 MiB. A negative value leaves the kernel's buffer autotuning alone.
	SocketBufferBytes int
	// MultipathTCP asks for MPTCP on every connection (Linux 5.6+ with
	// net.mptcp.enabled=1); where the kernel lacks it, plain TCP is used.
	MultipathTCP bool
	// EagerLimit is the largest message sent eagerly, in [0,
	// MaxEagerLimit]; larger messages use a rendezvous. Default 64 KiB. A
	// negative value sends every non-empty message by rendezvous.
	EagerLimit int
	// UnexpectedBytesMax bounds the bytes of eager messages this endpoint
	// holds before their receive is posted, summed over all peers. Each peer
	// may use an equal share; a sender without enough share uses a
	// rendezvous instead. Default 64 MiB, at least 0 (0 means no eager
	// messages except empty ones).
	UnexpectedBytesMax int64
	// UnexpectedMessagesMax bounds the number of messages from one peer that
	// wait for their receive at once (eager or rendezvous requests). A peer
	// that exceeds it is failed with a protocol error. Default 65536.
	UnexpectedMessagesMax int
	// ChunkBytes is the size of the data frames of a rendezvous message, in
	// [4 KiB, MaxChunkBytes]; chunks alternate over the connections and
	// other traffic can pass between them. Default 512 KiB.
	ChunkBytes int
	// IOBufferBytes is the size of each connection's read and write buffer
	// (bufio), in [4 KiB, 4 MiB]. Default 64 KiB.
	IOBufferBytes int
	// DialTimeout bounds each dial attempt and each handshake. Default 5 s.
	// Connect retries failed dials until its context ends.
	DialTimeout time.Duration
	// AbortHistoryMax is the number of ended operations remembered (those
	// this rank aborted and those a peer's abort ended here); the oldest is
	// forgotten first, after which its late messages are no longer dropped.
	// Default 1024, at least 1.
	AbortHistoryMax int
	// Key is the job's key: with it every handshake proves that both
	// sides hold it and every frame's header carries a tag (auth.go); the
	// zero Key (default) means no authentication, and a peer with a key
	// refuses this one.
	Key jobkey.Key
	// Payload is what a keyed connection does to frame bodies, besides
	// tagging every header: PayloadClear (default), PayloadTagged (a tag
	// over each body too) or PayloadEncrypted (AES-GCM). PeerPayload, if
	// set, gives the mode for a connection with a rank (a result below
	// Payload counts as Payload); a connection uses the higher of its two
	// sides' modes. Both need Key.
	Payload     PayloadMode
	PeerPayload func(rank int) PayloadMode
}

// PayloadMode is what a keyed connection does to frame bodies.
type PayloadMode uint8

// Payload modes.
const (
	PayloadClear     PayloadMode = iota // bodies only in clear (headers tagged)
	PayloadTagged                       // a GMAC tag after every body
	PayloadEncrypted                    // every body encrypted with AES-GCM, its tag after it
)

// withDefaults returns c with defaults filled in, or an error naming the
// first field out of range.
func (c Config) withDefaults() (Config, error) {
	if c.ListenAddr == "" {
		c.ListenAddr = "127.0.0.1:0"
	}
	setDefault(&c.ConnsPerPeer, 1)
	setDefault(&c.SocketBufferBytes, 4<<20)
	setDefault(&c.EagerLimit, 64<<10)
	if c.UnexpectedBytesMax == 0 {
		c.UnexpectedBytesMax = 64 << 20
	}
	setDefault(&c.UnexpectedMessagesMax, 1<<16)
	setDefault(&c.ChunkBytes, 512<<10)
	setDefault(&c.IOBufferBytes, 64<<10)
	setDefault(&c.AbortHistoryMax, 1024)
	if c.DialTimeout == 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.EagerLimit < 0 {
		c.EagerLimit = 0
	}
	if c.UnexpectedBytesMax < 0 {
		c.UnexpectedBytesMax = 0
	}
	checks := []struct {
		name      string
		v, lo, hi int64
	}{
		{"Rank", int64(c.Rank), 0, MaxWorldSize - 1},
		{"ConnsPerPeer", int64(c.ConnsPerPeer), 1, MaxConnsPerPeer},
		{"SocketBufferBytes", int64(c.SocketBufferBytes), -1 << 62, maxSocketBufferBytes},
		{"EagerLimit", int64(c.EagerLimit), 0, MaxEagerLimit},
		{"UnexpectedMessagesMax", int64(c.UnexpectedMessagesMax), 1, 1 << 30},
		{"ChunkBytes", int64(c.ChunkBytes), 4 << 10, MaxChunkBytes},
		{"IOBufferBytes", int64(c.IOBufferBytes), 4 << 10, 4 << 20},
		{"DialTimeout", int64(c.DialTimeout), 1, int64(time.Hour)},
		{"AbortHistoryMax", int64(c.AbortHistoryMax), 1, 1 << 20},
	}
	if c.Key.IsZero() && (c.Payload != PayloadClear || c.PeerPayload != nil) || c.Payload > PayloadEncrypted {
		return c, fmt.Errorf("tcp: Config.Payload = %d needs a Key (and at most %d)", c.Payload, PayloadEncrypted)
	}
	for _, k := range checks {
		if k.v < k.lo || k.v > k.hi {
			return c, fmt.Errorf("tcp: Config.%s = %d out of range [%d, %d]", k.name, k.v, k.lo, k.hi)
		}
	}
	return c, nil
}

func setDefault(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}
