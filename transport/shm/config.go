package shm

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// Limits of the configuration and of the slot format.
const (
	// SlotBytes is the size of one ring slot.
	SlotBytes = 256
	// InlineMax is the payload a slot carries after its header: the
	// largest message that takes one slot, and the longest abort reason.
	InlineMax = SlotBytes - slotHeadBytes
	// EagerMax is the largest message carried in the ring itself, in a
	// first slot and whole continuation slots (at most half of a ring:
	// with Config.RingSlots below 34 the limit is lower). Larger messages
	// are copied by the receiver from the sender's memory.
	EagerMax = 4096
	// MaxWorldSize is the largest world Listen accepts.
	MaxWorldSize = 1024
	// MaxRingSlots is the largest allowed Config.RingSlots.
	MaxRingSlots = 1 << 16
	// MaxPendingSendsLimit is the largest allowed Config.MaxPendingSends.
	MaxPendingSendsLimit = 1 << 20
	// AbortMemory is how many aborted operations each rank remembers; the
	// oldest is forgotten first.
	AbortMemory = 4096
	// DefaultSpinWait is Config.SpinWait's default. 4 ranks on 2 vCPUs,
	// medians of 5 and 6 interleaved runs (8 B / 64 KiB / 1 MiB AllReduce):
	// 50 us took 35-49 / 197-209 / 1123-1249 us, 200 us 28-40 / 152-189 /
	// 1042-1204 us; 1 ms was no better. A wait that outlasts it costs a
	// doorbell and, on a VM, the wake-up of an idle virtual CPU.
	DefaultSpinWait = 200 * time.Microsecond
	// OversubscribedSpinWait is Config.SpinWait's default when this host's
	// ranks are processes and outnumber its processors (see
	// defaultSpinWait). A wait that sleeps leaves every P of its process
	// idle, which puts the Go runtime's monitor thread (sysmon) into its
	// long sleep, and the next system call restarts it at 20 us rounds,
	// doubling only after 1 ms: with 4 ranks on 2 cores a rank whose waits
	// slept took 1.5-5.5 monitor wake-ups and 18-151 us of monitor CPU a
	// 1 MiB AllToAll call, each wake-up taking a core from a rank. Its
	// waits spin instead (each poll yields the core to the rank it waits
	// for): 3 interleaved pairs of jobs, 60 calls, load 10-20, 294, 399,
	// 427 us a call against 776, 575, 648 at DefaultSpinWait, the monitor
	// quiet (bench/results/shm_large.md, Session 16, a2ab). On a quiet
	// host the wall time showed neither gain nor loss (AllToAll 1 and
	// 16 MiB, 15 rounds: bench/results/quiet-20261205-1303).
	OversubscribedSpinWait = 10 * time.Millisecond
	// DefaultBoardSpinWait is Config.BoardSpinWait's default. A board wait
	// that outlasts its spin naps (20 us doubling to 1 ms: the board has no
	// doorbell), and with 4 ranks on 2 vCPUs those naps made single calls of
	// 1-29 ms. 64 KiB Broadcast, 16 runs of 300 calls (bench/results/
	// board_spin.md): at 200 us 8 runs had means of 37-438 us against
	// 10-14; at 1 ms none (10-16 us), AllReduce and AllToAll alike.
	DefaultBoardSpinWait = time.Millisecond
	// OversubscribedBoardSpinWait is Config.BoardSpinWait's default where
	// SpinWait's is OversubscribedSpinWait. A board wait that outlasts it
	// sleeps on the bell of the rank it waits for, which that rank rings
	// when it writes (collective's boardNap): with more ranks than cores,
	// a yield of a long spin hands the core to another waiter as often as
	// to a rank with work, and keeps the core looking busy, so the
	// kernel moves no rank with work onto it. 8 B Broadcast, 4 ranks on
	// 2 cores, 400000 calls, interleaved, load 21-29, the job's CPU per
	// call: 2.05-2.48 us at 20 us against 2.69-3.65 at 1 ms (3 pairs),
	// sched_yield 0.12-0.14 a call against 0.21-0.54; a spin cut at 8 or
	// 32 polls, 2.3-2.7 against 1 ms's 3.0-4.0 (3 rounds)
	// (bench/results/small_ops.md, Session 17, bcast8c).
	OversubscribedBoardSpinWait = 20 * time.Microsecond
	// MaxSpinWait is the largest allowed Config.SpinWait and BoardSpinWait.
	MaxSpinWait = 10 * time.Millisecond
	// LivenessInterval is how often an endpoint checks that its peers'
	// processes are alive.
	LivenessInterval = 100 * time.Millisecond
	// DefaultBoards and MaxBoards are Config.Boards' default and largest
	// value; DefaultBoardBytes, MinBoardBytes and MaxBoardBytes bound
	// Config.BoardBytes.
	DefaultBoards     = 8
	MaxBoards         = 256
	DefaultBoardBytes = 1<<20 + 36864
	MinBoardBytes     = 4096
	MaxBoardBytes     = 16 << 20
)

// Config configures a [Listener] and the [Endpoint] it connects. The zero
// value of every field but Size selects its default; Listen reports a field
// out of range as an error.
type Config struct {
	// Rank is this endpoint's rank, in [0, Size).
	Rank int
	// Size is the number of ranks in the world, in [1, MaxWorldSize]. Ranks
	// Connect reaches through other transports still count.
	Size int
	// RingSlots is the number of slots in each inbound ring, a power of two
	// in [16, MaxRingSlots]. Default 256 (64 KiB per sending rank). A full
	// ring does not fail a send: its slots wait in the sender's backlog.
	RingSlots int
	// BacklogMax bounds the slots one rank holds for one peer whose ring is
	// full; a send beyond it fails. Default 65536.
	BacklogMax int
	// MaxPendingSends bounds this rank's rendezvous sends in flight (posted
	// and not yet copied), in [1, MaxPendingSendsLimit]. Default 65536; a send
	// beyond it fails.
	MaxPendingSends int
	// MaxUnexpected bounds the messages carried in the ring that are held
	// before their receive is posted, over all peers; MaxUnexpectedBytes
	// bounds their bytes. When either is reached the rings are left unread
	// until receives are posted. Defaults 65536 and 16 MiB.
	MaxUnexpected      int
	MaxUnexpectedBytes int
	// SpinWait is how long a Wait polls the rings itself, yielding the
	// processor between polls, before it sleeps until the progress
	// goroutine completes its request. Polling saves the doorbell and the
	// wake-up of a sleeping process on every message, which dominates the
	// time of small messages. Default DefaultSpinWait, or
	// OversubscribedSpinWait where Connect finds more ranks of this host,
	// each a process of its own, than processors they can run on (the
	// union of their affinity masks: ranks bound a core each are not
	// oversubscribed); at most MaxSpinWait;
	// negative: never poll (sleep at once).
	SpinWait time.Duration
	// BoardSpinWait is SpinWait for a wait on a collective's board
	// (transport.BoardHost.Spin), which naps when it ends. Default: SpinWait
	// if that is set (so a SpinWait set alone bounds every wait's spin),
	// else DefaultBoardSpinWait; at most MaxSpinWait; negative, or SpinWait
	// negative: never poll.
	BoardSpinWait time.Duration
	// NoBalance turns off the spreading of this host's spinning ranks
	// over its processors (balance.go), which Connect turns on where the
	// ranks are processes that outnumber the processors they can run on
	// together and this one may run on more than one.
	NoBalance bool
	// Boards is how many boards this rank holds for the collectives'
	// one-round small algorithms (transport.BoardHost): one per
	// communicator that uses them; a communicator that finds none free
	// uses the point-to-point algorithms. Default DefaultBoards (8); at
	// most MaxBoards; negative: none. Every rank must have the same.
	Boards int
	// BoardBytes is the size of each board, a multiple of 4096 in
	// [MinBoardBytes, MaxBoardBytes]. Default DefaultBoardBytes (1060
	// KiB: four 256 KiB slots and their headers, and the collectives'
	// default ring of 256 small Broadcast slots, 34 KiB; a Broadcast of
	// up to 256 KiB runs on it: collective's DefaultBoardBroadcastBytes).
	// Its pages take memory only once written: a communicator whose
	// calls stay at or below 64 KiB touches about 292 KiB of it, as
	// before it grew. Every rank must have the same.
	BoardBytes int
	// Logger receives debug and error records; nil discards them.
	Logger *slog.Logger
	// Key is the job's key: with it each rank's hello proves to every
	// peer that it holds the key (auth.go), and Connect fails, naming the
	// rank, with a peer that cannot; the zero Key (default) means no
	// proof, and a peer with a key refuses this one.
	Key jobkey.Key

	// spinDefault records that withDefaults chose SpinWait (Connect may
	// then choose OversubscribedSpinWait), boardSpinDefault BoardSpinWait
	// (Connect may then choose OversubscribedBoardSpinWait).
	spinDefault, boardSpinDefault bool
}

// withDefaults returns cfg with defaults filled in, or an error naming the
// first field out of range.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Size < 1 || cfg.Size > MaxWorldSize {
		return cfg, fmt.Errorf("shm: world size %d out of range [1, %d]", cfg.Size, MaxWorldSize)
	}
	if cfg.Rank < 0 || cfg.Rank >= cfg.Size {
		return cfg, fmt.Errorf("shm: rank %d out of range [0, %d)", cfg.Rank, cfg.Size)
	}
	if cfg.RingSlots == 0 {
		cfg.RingSlots = 256
	}
	if cfg.RingSlots < 16 || cfg.RingSlots > MaxRingSlots || cfg.RingSlots&(cfg.RingSlots-1) != 0 {
		return cfg, fmt.Errorf("shm: RingSlots %d: want a power of two in [16, %d]", cfg.RingSlots, MaxRingSlots)
	}
	if cfg.BacklogMax == 0 {
		cfg.BacklogMax = 1 << 16
	}
	if cfg.BacklogMax < 1 {
		return cfg, fmt.Errorf("shm: BacklogMax %d: want at least 1", cfg.BacklogMax)
	}
	if cfg.MaxPendingSends == 0 {
		cfg.MaxPendingSends = 1 << 16
	}
	if cfg.MaxPendingSends < 1 || cfg.MaxPendingSends > MaxPendingSendsLimit {
		return cfg, fmt.Errorf("shm: MaxPendingSends %d out of range [1, %d]", cfg.MaxPendingSends, MaxPendingSendsLimit)
	}
	if cfg.MaxUnexpected == 0 {
		cfg.MaxUnexpected = 1 << 16
	}
	if cfg.MaxUnexpected < 1 {
		return cfg, fmt.Errorf("shm: MaxUnexpected %d: want at least 1", cfg.MaxUnexpected)
	}
	if cfg.MaxUnexpectedBytes == 0 {
		cfg.MaxUnexpectedBytes = 16 << 20
	}
	if cfg.MaxUnexpectedBytes < EagerMax {
		return cfg, fmt.Errorf("shm: MaxUnexpectedBytes %d: want at least EagerMax (%d)", cfg.MaxUnexpectedBytes, EagerMax)
	}
	spinSet := cfg.SpinWait > 0
	switch {
	case cfg.SpinWait == 0:
		cfg.SpinWait, cfg.spinDefault = DefaultSpinWait, true
	case cfg.SpinWait < 0:
		cfg.SpinWait = 0
	case cfg.SpinWait > MaxSpinWait:
		return cfg, fmt.Errorf("shm: SpinWait %v: at most %v", cfg.SpinWait, MaxSpinWait)
	}
	switch {
	case cfg.BoardSpinWait > MaxSpinWait:
		return cfg, fmt.Errorf("shm: BoardSpinWait %v: at most %v", cfg.BoardSpinWait, MaxSpinWait)
	case cfg.BoardSpinWait < 0 || cfg.SpinWait == 0:
		cfg.BoardSpinWait = 0
	case cfg.BoardSpinWait == 0 && spinSet:
		cfg.BoardSpinWait = cfg.SpinWait
	case cfg.BoardSpinWait == 0:
		cfg.BoardSpinWait, cfg.boardSpinDefault = DefaultBoardSpinWait, true
	}
	switch {
	case cfg.Boards == 0:
		cfg.Boards = DefaultBoards
	case cfg.Boards < 0:
		cfg.Boards = 0
	case cfg.Boards > MaxBoards:
		return cfg, fmt.Errorf("shm: Boards %d: at most %d", cfg.Boards, MaxBoards)
	}
	if cfg.BoardBytes == 0 {
		cfg.BoardBytes = DefaultBoardBytes
	}
	if cfg.BoardBytes < MinBoardBytes || cfg.BoardBytes > MaxBoardBytes || cfg.BoardBytes%4096 != 0 {
		return cfg, fmt.Errorf("shm: BoardBytes %d: want a multiple of 4096 in [%d, %d]", cfg.BoardBytes, MinBoardBytes, MaxBoardBytes)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

// defaultSpinWait is the SpinWait of an endpoint whose Config left it to
// the default (spinDefault), once Connect knows its peers on this host:
// localRanks ranks (this one included), inProcess when one of them is a
// goroutine of this process (NewLocalWorld), where they can run on cpus
// processors together (Endpoint.localCPUs). Ranks that are processes and
// outnumber the processors get
// OversubscribedSpinWait: each of their polls yields the core to a rank
// that needs it, so the longer spin costs little, and a wait that sleeps
// restarts the runtime's monitor thread (OversubscribedSpinWait's note).
// Ranks in one process keep DefaultSpinWait: their spinning goroutines
// share the process's Ps with the ranks they wait for.
func defaultSpinWait(localRanks int, inProcess bool, cpus int) time.Duration {
	if oversubscribed(localRanks, inProcess, cpus) {
		return OversubscribedSpinWait
	}
	return DefaultSpinWait
}

// oversubscribed reports whether this host's ranks are processes that
// outnumber the processors they can run on (defaultSpinWait's terms).
func oversubscribed(localRanks int, inProcess bool, cpus int) bool {
	return !inProcess && localRanks > max(cpus, 1)
}
