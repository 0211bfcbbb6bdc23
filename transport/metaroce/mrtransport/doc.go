// Package mrtransport is gocoll's [transport.Endpoint] over MetaRoCE on real
// UDP sockets: the engine that drives the pure MetaRoCE core
// ([metaroce.Endpoint]) with goroutines, sockets and the clock, and the
// mapping of the transport contract onto the core's messages.
//
// # Set-up
//
// Each rank calls [Listen], which opens Config.Paths UDP sockets bound to
// Config.ListenAddr (one per path, each with its own source port: the ECMP
// entropy that spreads a connection's paths over a fabric), and publishes
// [Listener.Addr] (a [PeerAddr], printable and parsable) through its
// launcher. [Listener.Connect] then connects to every other rank: lower
// ranks dial higher ones with the core's HELLO handshake, and Connect
// returns when every connection is up, or when its context ends, with an
// error naming the missing ranks. [NewLocalWorld] does both for n ranks on
// loopback.
//
// # Datagrams, ports and interfaces
//
// Datagrams are sized from the MTU on Linux (Config.MaxDatagram left 0 off
// loopback): an endpoint offers its interfaces' MTU less IP and UDP
// headers ([DatagramForMTU]; 8972 bytes on a 9000-byte IPv4 link), and each
// connection it dials offers the MTU of the routes to the peer's sockets
// (IP_MTU, which includes what path MTU discovery learnt), through
// metaroce.Endpoint.ConnectDatagram; a connection uses the smaller side's
// offer. Elsewhere datagrams are DefaultNICDatagram (1452) bytes.
//
// For firewalls between sites, Config.PortRange ([ParsePortRange]) keeps the
// path sockets' ports within a range, and Config.Interfaces
// ([ParseInterfaces]) binds path i to entry i mod n: an interface (its
// address and SO_BINDTODEVICE) or a local address, one plane per entry.
//
// Paths are spread over a fabric's ECMP links by their source ports, which
// a hash maps to links blindly (8 ports over 4 links leave one unused about
// a third of the time). Use more paths than links: moving one of two paths
// that share a link never loses that link. The endpoint watches its
// per-path figures and, when two paths behave as one (a shared bottleneck:
// correlated queueing delay or losses, equal rates; on a connection of two
// paths, also both congested at rates more than a quarter apart), re-opens
// one of them on a new port (Config.Repick, [RepickPolicy]; the peers are
// told, and the old socket is read for 10 s more), judges the move by the
// send rate and undoes it if the rate fell; moves are paced, at most one a
// second and rarer while they bring nothing. On loopback, and with fixed
// ports, ports are not re-picked.
//
// # Engine
//
// The engine is the only part of MetaRoCE with goroutines and a clock: a
// reader goroutine per path socket and a timer. All use of the core is
// under one mutex. A reader reads a batch of datagrams, feeds them to the
// core with their ECN marks, hands the core's events to the endpoint (which
// completes requests and posts the next ones), polls the datagrams the core
// has ready and, after unlocking, writes them in batches, each from the
// socket of its path. API calls do the same from the caller's goroutine, so
// neither an answer to a datagram nor a new message waits for a hand-off to
// another goroutine. Writes happen outside the lock but in the order they
// were polled, since reordering within a path would look like loss. The
// timer is a time.Timer set to the core's NextTimeout after every input,
// moved earlier or later as that moves (so it does not fire for a deadline
// that has gone; one that fires early re-arms), and an idle endpoint does
// not poll. The core's time is time.Since a fixed start,
// never allowed to go back.
//
// With Config.CoalesceWait (by default on where the process runs with one
// processor at Connect) and MTU-sized datagrams (not loopback's) the
// default sockets are read instead by one endpoint reader (coalesce.go): the
// sockets are left out of the runtime's poller and one goroutine waits for
// any of them; after a read that heard only far peers (a WAN's: lowest
// RTT at least four naps) it naps before reading again, so that one
// wake-up reads several paths' paced datagrams instead of one wake-up per
// datagram; near peers' datagrams are read at once.
//
// The default path socket is [OpenUDPIO]'s (recvmmsg/sendmmsg, ECN, GRO
// trains split on read, GSO trains for small datagrams, and DATA payloads
// too large for a train, or of a full piece (with a piggybacked ACK, if
// any, after it), sent straight from the message with a gathering write,
// metaroce.Endpoint.PollTransmitVec, rather than copied into the datagram
// buffer; datagrams next to each other to the same address go as one GSO
// train, gathered ones straight from their pieces too); [OpenUDP] is a plain one, and Config.OpenSocket takes any [PathSocket], which is how
// tests interpose on the network and how [SimNet] replaces it. A send
// whose buffer a gathering write in progress reads does not end for its
// caller (complete, fail, or let Cancel return) before that write is over.
//
// # Messages
//
// A message with tag {Comm, Op, Seq} is the core message with key
// (stream Comm, msg (Op mod 2^31)<<32 | Seq) on the connection to its peer;
// operations 2^31 apart share keys and must not be in flight between the
// same ranks at once. The core wants a key unique among a connection's
// messages in flight, while the contract allows many messages with one tag,
// matched in order; so messages with one key go to the core one at a time,
// in order, each once the one before it completed (a per-key queue on each
// side, removed when empty). A receive is posted into the core with the
// caller's buffer, and the core copies each datagram's piece straight into
// it: the only other copy is the socket read. A send whose receive is not
// yet posted travels eagerly within the core's unexpected-byte budget and
// is held by the receiving core. A rank's messages to itself are matched
// and copied locally.
//
// A send of at most Config.EagerBytes is eager: when it goes to the core,
// its bytes are copied and its request completes at once, as a TCP send
// completes once the kernel has its bytes; the copy stays at the head of
// its key's queue until the peer acknowledges it. So a small send's latency
// is not a round trip, and the core may hold its ACKs for AckDelay
// (metaroce.Config.DelaySmallAcks) so that one ACK covers several small
// messages. The copies held at once are bounded by Config.EagerBuffer.
//
// A withdrawn send (Cancel) that had started is aborted in the core; the
// receive it was matched to is posted again for the next message with its
// tag, as if the withdrawn message had never been sent. Cancel of a receive
// cancels it in the core, which no longer writes the buffer when Cancel
// returns.
//
// # Aborts
//
// Abort ends an operation locally and sends each told peer a control
// message (a core message on a key with the top bit set, numbered per
// connection) carrying the operation and the reason's text, cut to
// [MaxReasonBytes]. A rank that receives one ends the operation the same
// way unless it already ended it: pending requests of the operation fail
// (those in the core are cancelled there first), later ones are refused,
// and its messages are discarded. Messages the core holds for an ended
// operation, or that arrive later, are discarded by posting an empty
// receive for them when the core reports them (metaroce.EventUnexpected);
// otherwise they would fill the connection's message window and stall it.
// The last Config.AbortMemory ended operations are remembered.
//
// # Failure and close
//
// A connection the core fails (idle timeout, CLOSE from the peer) fails
// every request with that peer, and later ones, with a
// *transport.PeerError naming the rank, except receives of messages that
// had arrived whole before the end: the core keeps those (within its
// unexpected-byte budget) and a receive posted later still gets them, so a
// rank that sends its last results and exits loses nothing its sends
// reported done. That holds after a crash too (ErrPeerGone, a timeout):
// only what was not whole is lost. The connection's counters (Stats) stay
// readable after its end. A peer whose process died sends
// no CLOSE, but its sockets close: on Linux the udpio sockets read the
// ICMP port unreachable that the next datagram there draws (a keepalive
// probe at the latest) and the connection fails with metaroce.ErrPeerGone
// within metaroce.PeerGoneGrace, rather than at the idle timeout
// (EngineStats.PortUnreachable and PeerGone count them). Close fails
// pending receives with transport.ErrClosed, and the pending sends but
// those under way: the send of a tag whose message is in the core (it
// carries one message per tag at a time; an eager send stays there
// until acknowledged) goes on, and the sends queued behind it follow in
// turn, each completing only when acknowledged. Close then lingers, up
// to Config.CloseLinger, until the peers have acknowledged every message
// already sent (eager sends, these draining sends, aborts) or their
// connections end; what is left then fails with transport.ErrClosed. So
// a rank closing right after its last collective does not fail a peer's
// operation, and a send completes without error only if the peer has
// it. Then the core sends every peer a final ACK (which
// completes the peer's sends that arrived whole) and a CLOSE, and Close
// closes the sockets and waits for the readers.
//
// # Authentication
//
// With a job key (Config.Core.Auth, metaroce.AuthMode) every handshake
// proves the key both ways and every later datagram carries a GCM tag and
// a per-path packet number; the core drops (and counts) forged and
// replayed datagrams. A HELLO the core refuses for its key is answered to
// the address it came from (metaroce.Endpoint.PollRefusal), and a
// Connect whose connection is refused so fails at once, in one line,
// without dialling again. EndpointStats.Core.DropAuth and DropReplay (and
// transport.Stats.AuthDropped and Replayed) count the drops.
//
// # Observability
//
// [Endpoint.Stats] returns the engine's socket counters, the core's drop
// counters (garbage datagrams land there), the transport's own counters,
// and for every connection the core's counters and each path's bytes,
// packets, retransmissions, RTT, window, state and ECN marks.
// [Endpoint.LogStats] writes them to Config.Logger, which also gets
// connection and path-state events.
//
// # Simulation
//
// [SimNet] replaces the UDP network with a seeded simfabric: [NewSimWorld]
// builds a world over it. Outside a testing/synctest bubble it runs in real
// time; inside one, the engine's timers, the fabric's delays and the
// callers' deadlines all follow the bubble's virtual clock. The fabric's
// faults are drawn from seeded streams, but the order in which datagrams
// reach a link follows the scheduling of the endpoints' goroutines, so runs
// are repeatable only in practice: small worlds (2 and 3 ranks in the
// tests) have repeated exactly, larger ones vary slightly from run to run.
//
// # Limits
//
// Per endpoint: Paths sockets, each with a reader holding Batch buffers of
// 64 KiB (or one endpoint reader's Batch buffers for all); one batch of Batch datagram buffers per goroutine writing at
// once; the core's limits per connection (MaxSends queued sends and
// MaxRecvs posted receives, beyond which requests fail with an error
// wrapping metaroce.ErrLimit, MsgWindow messages, UnexpectedBytes held
// bytes); AbortMemory ended operations; EagerBuffer bytes of eager sends'
// copies; the per-key queues hold only requests the caller posted.
package mrtransport
