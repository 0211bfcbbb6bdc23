package mrtransport

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// Defaults and limits of [Config].
const (
	// DefaultPaths is Config.Paths when it is 0. Over 4 ECMP links, 8
	// ports hashed at random leave a link unused in about 4 connections
	// in 10; the early re-pick phase (RepickPolicy.Early) finds it within
	// a second in most (on the simulated fabric, 100 connections: all 4
	// links used after 1 s by 89 %, after 8 s by all). 16 paths would
	// start on all 4 in 94 % (99 % after 1 s) but cost a fifth to two
	// fifths more CPU per byte on loopback, twice to three times the ACKs,
	// 1 MiB of read buffers per path, and a least window of one datagram
	// per path, which in the lab's incast (6 senders into one link) raised
	// the drops from 0.27 % to 8.83 % (bench/results/ecmp_sim/t12.md).
	// For the two-site lab job (session 24, bench/results/paths_ab) 16
	// gained 2 to 3 points of the hierarchical WAN bound in virtual time;
	// in the lab it cost 8 to 14 % more CPU per MB on one connection,
	// twice the page faults per call and about 9 % more job CPU per call,
	// for no gain its busbw could show under load: a job that has the CPU
	// takes 16 with GOCOLL_PATHS (launcher).
	DefaultPaths = 8
	// DefaultArrivalTimes is the ArrivalTimes a job takes unless
	// GOCOLL_ARRIVAL_TIMES says otherwise (Config.ArrivalTimes): on since
	// session 20. In the two-site lab (bench/cpu_lab.sh, quiet, 57eeddd,
	// bench/results/arrival_times) a 16 MiB hierarchical AllReduce took
	// 0.292 job CPU-s a call with it against 0.400 without, the site
	// connections' paths cut their windows for delay 27-38 times against
	// 822-849 (host scheduling read as queueing) and held 47-59 KiB
	// against 9-12, and one connection within a site moved 13.4 against
	// 9.1 GB in 8 s at 1.06 against 1.51 CPU-ms a MB, with 68 resends a
	// path against about 1,000.
	DefaultArrivalTimes = true
	// DefaultMaxSends and DefaultMaxRecvs are Config.Core.MaxSends and
	// MaxRecvs when they are 0: twice the core's 4096, since a collective
	// operation of gocoll's posts up to two messages per peer (its header
	// and its data, for more than 512 bytes) and the collective layer runs
	// up to 4096 operations at once (collective.MaxRunningOps): 4000 sends
	// of 16 KiB to one peer at once failed with metaroce.ErrLimit at 4096.
	// Each message costs the core about a hundred bytes.
	DefaultMaxSends = 8192 + 64
	DefaultMaxRecvs = 8192 + 64
	// DefaultMsgWindow is Config.Core.MsgWindow when it is 0: twice
	// DefaultMaxSends. A sender starts its messages in the order it queued
	// them, at most the receiver's window ahead of the oldest one the
	// receiver has not finished, and a started message finishes only once
	// received; the collective layer's sends reach the transport in any
	// order (each asynchronous operation runs in its own goroutine), so a
	// receiver may wait first for a message queued behind thousands of
	// others. With the core's 4096 and 4200 sends of 16 KiB queued, a
	// receive of the last one waited for ever (TestReceiveOrderBeyondWindow;
	// bench/rss.sh's storm). The window holds every message a peer may
	// have queued (MaxSends), and as many again held whole before their
	// receive (their sends completed, so they no longer count in the
	// peer's MaxSends). A message costs the receiver about 250 bytes of
	// state while it is started and unfinished.
	DefaultMsgWindow = 2 * DefaultMaxSends
	// DefaultLoopbackDatagram is Config.MaxDatagram on a loopback address:
	// near the 65507-byte UDP limit, so a 64 MiB message needs about a
	// thousand datagrams.
	DefaultLoopbackDatagram = 65000
	// DefaultLoopbackMinRTO is Config.Core.MinRTO on a loopback address
	// when it is 0. On loopback the round trip is the peer's goroutine
	// scheduling, which stalls a path's reader for milliseconds when the
	// machine is busy; with the core's 200µs default a 64 MiB transfer
	// saw a dozen spurious timeouts, each resending a window that had
	// arrived. Real loss on loopback (a full socket buffer) is repaired by
	// SACK long before.
	DefaultLoopbackMinRTO = 10 * time.Millisecond
	// DefaultLoopbackAckDelay is Config.Core.AckDelay on a loopback
	// address when it is 0: long enough that the ACK of a small message
	// usually rides on the next DATA to its sender (PiggybackAcks) instead
	// of costing a datagram; small sends are eager, so nobody waits for it,
	// and a bulk transfer's pieces are acknowledged every AckEvery packets
	// and at its last piece regardless. 8-byte AllReduce at 4 ranks: 5
	// datagrams per rank per op instead of 7.8 with the core's 20µs.
	DefaultLoopbackAckDelay = 500 * time.Microsecond
	// DefaultLoopbackDelayTarget is Config.Core.DelayTarget on a loopback
	// ListenAddr when it is 0. On loopback the round trip is the
	// scheduler's latency, which jumps by hundreds of microseconds with
	// nothing queued: with the core's 20 us default, paths cut their
	// windows on almost every ACK (20 thousand cuts in 200 AllReduces of
	// 1 MiB at 4 ranks, each then taking 5.0 ms instead of 1.8-2.1 ms).
	// Loss and the receiver's rate still limit the senders.
	DefaultLoopbackDelayTarget = time.Millisecond
	// DefaultNICDatagram is Config.MaxDatagram on other addresses where
	// the MTU cannot be read (systems other than Linux): a 1500-byte
	// Ethernet MTU less IPv6 and UDP headers. On Linux the datagram is
	// sized from the MTU instead (see Config.MaxDatagram).
	DefaultNICDatagram = 1452
	// DefaultBatch is Config.Batch when it is 0.
	DefaultBatch = 16
	// MaxBatch is the largest Config.Batch.
	MaxBatch = 1024
	// DefaultSocketBuffer is Config.SocketBuffer when it is 0.
	DefaultSocketBuffer = 8 << 20
	// MaxSocketBuffer is the largest Config.SocketBuffer.
	MaxSocketBuffer = 256 << 20
	// DefaultAbortMemory is Config.AbortMemory when it is 0.
	DefaultAbortMemory = 4096
	// MaxAbortMemory is the largest Config.AbortMemory.
	MaxAbortMemory = 1 << 20
	// MaxSize is the largest world.
	MaxSize = 1 << 16
	// MaxReasonBytes is the longest abort reason sent to peers; a longer
	// reason is cut.
	MaxReasonBytes = 1024
	// DefaultEagerBytes is Config.EagerBytes when it is 0.
	DefaultEagerBytes = 64 << 10
	// MaxEagerBytes is the largest Config.EagerBytes.
	MaxEagerBytes = 1 << 20
	// DefaultEagerBuffer is Config.EagerBuffer when it is 0.
	DefaultEagerBuffer = 1 << 20
	// MaxEagerBuffer is the largest Config.EagerBuffer.
	MaxEagerBuffer = 1 << 30
	// DefaultSpinWait is Config.SpinWait when it is 0.
	DefaultSpinWait = 50 * time.Microsecond
	// MaxSpinWait is the longest Config.SpinWait.
	MaxSpinWait = 10 * time.Millisecond
	// DefaultCoalesceWait is the endpoint reader's nap where
	// Config.CoalesceWait is left 0 and the default's rule turns it on
	// (Endpoint.autoCoalesce).
	DefaultCoalesceWait = time.Millisecond
	// MaxCoalesceWait is the longest Config.CoalesceWait.
	MaxCoalesceWait = 10 * time.Millisecond
	// DefaultControlDSCP is Config.ControlDSCP when it is 0: CS6
	// (network control, RFC 4594), the class DiffServ networks serve
	// ahead of bulk data, as UEC and MRC give their control packets (ACK,
	// NACK, probes) a DSCP of their own.
	DefaultControlDSCP = 48
	// DefaultCloseLinger is Config.CloseLinger when it is 0.
	DefaultCloseLinger = time.Second
	// MaxCloseLinger is the longest Config.CloseLinger.
	MaxCloseLinger = time.Minute
)

// PayloadCRC says whether DATA packets' CRC32C covers their payload.
type PayloadCRC int

// PayloadCRC values.
const (
	// PayloadCRCAuto checks payloads except on a loopback ListenAddr
	// with the default sockets (no Config.OpenSocket), where nothing can
	// damage them (the kernel skips the UDP checksum there too) and the
	// check would cost a pass over every byte at each end.
	PayloadCRCAuto PayloadCRC = iota
	// PayloadCRCOn always checks payloads.
	PayloadCRCOn
	// PayloadCRCOff never checks payloads (headers and fields still are).
	PayloadCRCOff
)

// Config configures a [Listener] and the [Endpoint] it connects. A zero
// field takes its documented default; a field out of range makes [Listen]
// fail.
type Config struct {
	// Rank is this endpoint's rank, in [0, Size).
	Rank int
	// Size is the number of ranks in the world, 1 to MaxSize.
	Size int
	// ListenAddr is the address every path socket binds. Default
	// 127.0.0.1:0. With port 0 each socket gets its own ephemeral port;
	// with port p, path i binds port p+i.
	ListenAddr netip.AddrPort
	// Paths is the number of paths, one UDP socket each, 1 to
	// metaroce.MaxPaths. Default DefaultPaths.
	Paths int
	// MaxDatagram is the largest datagram, 256 to 65507 bytes. Default
	// DefaultLoopbackDatagram on a loopback ListenAddr (with no
	// Interfaces). Otherwise, on Linux, it is sized from the MTU (see
	// DatagramForMTU: the MTU less IP and UDP headers, 8972 bytes on a
	// 9000-byte IPv4 link): the endpoint offers the smallest MTU of its
	// path sockets' interfaces (a socket bound to the unspecified address
	// counts the largest MTU of the host's interfaces that are up and not
	// loopback), and each connection it dials offers the smallest MTU of
	// the routes to the peer's path sockets (IP_MTU, which includes the
	// MTUs learnt by path MTU discovery); a connection uses the smaller of
	// its two sides' offers. Elsewhere the default is DefaultNICDatagram.
	// A MaxDatagram set here is used as it is.
	MaxDatagram int
	// Batch is the most datagrams read or written by one system call, 1
	// to MaxBatch. Default DefaultBatch. Each path's reader holds Batch
	// buffers of ReadBufferSize (64 KiB) bytes, and each goroutine that
	// writes holds a batch of up to Batch buffers of MaxDatagram bytes.
	Batch int
	// SocketBuffer is the requested SO_RCVBUF and SO_SNDBUF of each path
	// socket, up to MaxSocketBuffer bytes (the kernel may cap it:
	// net.core.rmem_max). Default DefaultSocketBuffer.
	SocketBuffer int
	// EagerBytes is the longest send that is eager, 1 to MaxEagerBytes,
	// or negative for none. Default DefaultEagerBytes. An eager send's
	// bytes are copied when it is posted (or when it reaches the head of
	// its tag's queue) and its Request completes at once, as a TCP send
	// completes once the kernel has the bytes; the transport keeps the
	// copy until the peer acknowledges the message. A failure after that
	// (the peer dies) is not reported to the sender: the peer's receive,
	// or the sender's next request to the peer, fails instead.
	EagerBytes int
	// EagerBuffer bounds the bytes of eager sends held at once, over all
	// peers, 1 to MaxEagerBuffer. Default DefaultEagerBuffer. A send that
	// would go beyond it is not eager: it completes when acknowledged.
	// Copies are made in power-of-two buffers, and up to EagerBuffer bytes
	// of them are kept for reuse once their sends complete.
	EagerBuffer int
	// CloseLinger bounds how long Close waits for the peers to
	// acknowledge the messages already sent (eager sends, control
	// messages) and the sends it lets drain (those under way and those
	// queued behind them with their tags) before it closes the
	// connections, up to MaxCloseLinger; negative means no wait (and no
	// send drains). Default DefaultCloseLinger.
	CloseLinger time.Duration
	// SpinWait is how long a waiting request (Wait, and the collectives'
	// wait through transport.Spinner) reads the path sockets itself,
	// yielding the processor between reads, before it sleeps until a
	// reader goroutine completes it (a receive of at most 4 KiB: four
	// times as long); up to MaxSpinWait, negative for never. Default
	// DefaultSpinWait. Reading saves the wake-up of a
	// sleeping process on every message, which dominates a small
	// message's time where ranks outnumber cores. Only the default udpio
	// sockets on Linux can be read this way. At most 16 of an endpoint's
	// waiters spin at once, and after 8 small receives' spins in a row
	// that ended without their message only every 16th small receive
	// spins until one pays (spinadmit.go; EngineStats.SpinsSkipped counts
	// the waits that did not spin).
	SpinWait time.Duration
	// PayloadCRC says whether the CRC32C of the DATA packets this
	// endpoint sends covers their payload; it sets Core.PayloadUnchecked.
	// Default PayloadCRCAuto. Receivers accept both forms.
	PayloadCRC PayloadCRC
	// ControlDSCP is the DSCP (1 to 63) of the control datagrams (ACKs,
	// probes, HELLO, CLOSE; not DATA, even with a piggybacked ACK), so
	// that a network with a priority class for it serves them ahead of the
	// data queued in the other direction: an ACK waiting behind a FIFO of
	// data lengthens the round trip the windows are sized from and fires
	// spurious timeouts. Negative: not marked (class 0, as DATA). Default
	// DefaultControlDSCP. The mark rides in each datagram's sendmmsg
	// entry (an IP_TOS / IPV6_TCLASS control message: no system call
	// more); DATA keeps class 0. Where the network ignores DSCP nothing
	// changes.
	ControlDSCP int
	// AbortMemory is how many ended operations are remembered, 1 to
	// MaxAbortMemory, oldest forgotten first; messages of a forgotten
	// operation are no longer dropped on arrival. Default
	// DefaultAbortMemory.
	AbortMemory int
	// ArrivalTimes hands the core each datagram's kernel receive time
	// (Message.Received, converted by arrival.go) as its arrival
	// (metaroce.Endpoint.HandleDatagramAt); without it the sockets ask for
	// no timestamps and the core gets arrival = now, as before session 15.
	// Off in a Config built by hand; a job takes DefaultArrivalTimes (on)
	// unless GOCOLL_ARRIVAL_TIMES says otherwise. The core keeps two RTTs (see "Arrival times"
	// in its documentation): in its sim with reads late by up to 500 us it
	// then delivers more with arrival times than without on seeds 15-19 at
	// 100 and 10 Gbit/s (TestArrivalTimesLateReadsDelivery), but not on
	// every seed (bench/results/cpu_lab README, "Session 15, swift15b").
	// A wall-clock step between a stamp and its read is detected
	// (arrival.go), and the core's one-way delay minimum is windowed.
	ArrivalTimes bool
	// CoalesceWait, if positive, turns on the endpoint reader
	// (coalesce.go), up to MaxCoalesceWait; negative turns it off; 0, the
	// default, turns it on with DefaultCoalesceWait at the first Connect
	// where the process then runs with one processor (see below). With
	// it the path sockets are left out of the runtime's poller
	// (udpio.Config.Unpolled) and one goroutine reads them all: it waits
	// for the first datagram on any of them, and after a read that heard
	// only far peers (a connection whose lowest RTT is at least
	// coalesceRTTFactor times CoalesceWait) it sleeps CoalesceWait before
	// it reads again, so that one wake-up reads what several paths
	// received meanwhile instead of one per datagram (a WAN's paced
	// datagrams come ~90 us apart on 4 paths and found a reader asleep
	// each time). A near peer's datagrams are read as before, at once.
	// An idle process's sleep lasts at least a millisecond (Go's timers);
	// the kernel's receive stamps (ArrivalTimes) keep the delay signal
	// exact despite the late read. Only the default sockets on Linux, and
	// only where MaxDatagram is sized from the MTU or below 16 KiB
	// (loopback's 64 KB datagrams are read into place instead: not
	// coalesced); a job sets it with GOCOLL_MR_COALESCE (launcher).
	//
	// The default's rule (Endpoint.autoCoalesce): on where, at the first
	// Connect, runtime.GOMAXPROCS is 1 (a job's ranks where they
	// outnumber the cores, as in the two-site lab: the launcher fits
	// GOMAXPROCS after Listen, before Connect, so Connect then moves the
	// sockets from their readers to the endpoint reader) and MaxDatagram
	// is below placeMinDatagram; otherwise off. Why: with one processor,
	// across the WAN, it cut the CPU per DATA datagram by a fifth to a
	// third and a job's CPU per 16 MiB AllReduce (coal27.md), and lost no
	// LAN goodput (coal27: within the rounds' spread; coal28.md); with
	// more, per-socket readers read a LAN's paths in parallel and one
	// endpoint reader cut a LAN connection's goodput (session 27, coal27:
	// 2.7-4.0 against 0.9-1.6 Gbit/s at GOMAXPROCS 2, 4 rounds;
	// bench/results/cpu_lab/coal27.md, coal28.md).
	CoalesceWait time.Duration
	// AckRoom turns Core.AckRoom on: DATA pieces leave room for an ACK,
	// so that on a connection with DATA both ways most ACKs ride on DATA
	// (bench/results/wan_overhead.md, "Session 22, wake22"). Default off:
	// in the two-site lab it changed nothing measurable (bench/results/
	// quiet-20261206-1121: 16 and 64 MiB within a point of it off), and in
	// virtual time it traded 3-4x the spurious timeouts (a piggybacked ACK
	// waits behind DATA where a lone one takes the control class) for a
	// point within the seeds' spread; a peer of a version before it does
	// not connect to a rank that asks for it (see metaroce.Config.AckRoom).
	AckRoom bool
	// SendSamples, if not "", turns the send sampler on (sampler.go): a
	// diagnostic that records, every millisecond, what holds each busy
	// connection's posted data back (metaroce.SendState: credit, window,
	// pacing, the peer's rate, or nothing but a late driver) beside how
	// late the sampler and the engine's timer ran, and that Close writes
	// to the file of this name followed by a dot and the rank (so ranks
	// may share the name). Each sample costs a pass through the engine's
	// lock.
	// Default off; a job sets it with GOCOLL_MR_SAMPLES (launcher).
	SendSamples string
	// Core configures the MetaRoCE core. Its NodeID, Paths and MaxDatagram
	// are set from Rank, Paths and MaxDatagram, ReportUnexpected is
	// turned on, and so are PiggybackAcks, AckRoom (if AckRoom) and, while sends may be eager
	// (their requests do not wait for the ACK), DelaySmallAcks; a MinRTO of 0 on a loopback
	// ListenAddr is DefaultLoopbackMinRTO (at most MaxRTO), an
	// AckDelay of 0 there is DefaultLoopbackAckDelay and a DelayTarget of 0
	// DefaultLoopbackDelayTarget; an IDSeed of 0 is replaced by a random one. A
	// RecvCapacity of 0 is replaced by -1 (no receiver-driven rate): the
	// core's measured capacity mistakes scheduling jitter and reordering
	// for a standing queue and can lock in a rate far below the link's
	// (seen: 2.5 to 10 MB/s per sender on 10 Gbit/s simulated links, and
	// about 600 MB/s on loopback). Set the receive link's rate to have
	// receivers share it among their senders.
	Core metaroce.Config
	// Logger receives connection events, peer failures and, on
	// Endpoint.LogStats, the counters. Default: none.
	Logger *slog.Logger
	// OpenSocket opens path i's socket bound to addr. Default: a udpio
	// socket (OpenUDPIO) with SocketBuffer and Batch, bound to its
	// Interfaces device if it has one. Tests use it to
	// interpose on the sockets or to put a simulated network in their
	// place. An opener must fail with an error wrapping syscall.EADDRINUSE
	// when addr's port is taken, for PortRange to try another.
	OpenSocket SocketOpener
	// PortRange, if not the zero value, is the UDP ports the path sockets
	// bind (for firewalls between sites): each socket takes the first free
	// port from a random point of the range. It must hold at least Paths
	// ports, and several ranks on one host need Paths ports each, so give
	// it room; ListenAddr's port must then be 0. Listen fails, naming the
	// range, when no port of it is free. Default: none (ephemeral ports,
	// or ListenAddr's port plus the path index). ParsePortRange reads the
	// form "50000-50999".
	PortRange PortRange
	// Interfaces, if not empty, chooses each path's local interface (or
	// plane): path i binds entry i mod len(Interfaces), which is a local
	// IP address or an interface name. A name binds the socket to the
	// interface (SO_BINDTODEVICE, Linux only) and to its first address of
	// ListenAddr's family, preferring a global address. ListenAddr's
	// address is then not used (its port is); with Interfaces, the
	// default ListenAddr is 0.0.0.0:0 and the loopback defaults do not
	// apply. 1 to metaroce.MaxPaths entries; ParseInterfaces reads the
	// form "eth1,eth2". Default: every path binds ListenAddr. A custom
	// OpenSocket is given the address only: it binds the device itself
	// (udpio.Config.Device), or leaves the route to the routing table.
	Interfaces []string

	// Repick configures the re-picking of a path's port when two paths
	// behave as one (a shared bottleneck; see RepickPolicy): the path's
	// socket is re-opened on another port (of PortRange, if set) so that
	// ECMP routers hash it anew, the peers are told, and the old socket is
	// read for 10 s more. On by default except on a loopback ListenAddr
	// and with a fixed ListenAddr port; Repick.Off turns it off. In the
	// first Repick.Early (default 2 s; longer where the path is sampled less often than Repick.EarlySample, by their ratio: up to 5 times with the defaults, at long RTTs) of data, at most one re-pick per
	// Repick.EarlyInterval (default 200 ms); then at most one per
	// Repick.Interval (default 1 s), doubling after each that did not
	// raise the endpoint's send rate. Besides, a path whose rates (both
	// ways) run Repick.Crowded (default 1.5) times below another path's
	// of its connection is re-picked as soon as the last move is judged,
	// and the move undone unless the path's rates, as a share of the
	// other paths', rose (crowded.go): this evens out the links' path
	// totals where several connections share ECMP links. Only one end of
	// a connection re-picks its paths: the lower-ranked one, unless it
	// only receives there (then the sending end; see decides).
	Repick RepickPolicy

	// autoDatagram: MaxDatagram was left 0 on a non-loopback address, so
	// Listen and Connect size it from the MTU.
	autoDatagram bool
}
