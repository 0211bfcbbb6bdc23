// Package shm implements [transport.Endpoint] between ranks on one host,
// each in its own process (or several in one process, for tests), through
// shared memory and a single copy per byte.
//
// # How a message moves
//
// Every rank owns a segment (an anonymous memfd) holding one inbound ring of
// fixed 256-byte slots per sending rank, and an eventfd as its doorbell.
// Peers take both file descriptors with pidfd_getfd(2) at Connect, so no
// file is ever named in /dev/shm and nothing is left behind by a crash;
// Connect returns once every peer has taken them (each sends a HELLO).
//
//   - A message of at most [EagerMax] bytes travels in the ring: its first
//     [InlineMax] bytes in the slot with its header, the rest in the
//     following slots, published together. The send completes once they
//     are written (or queued behind a full ring, up to Config.BacklogMax
//     slots).
//   - A larger message is a rendezvous: the slot carries the address of the
//     sender's buffer, and the receiver, once a receive matches it, copies
//     the bytes straight from the sender's memory into its own buffer with
//     process_vm_readv(2) (cross-memory attach, as OpenMPI's vader does). It
//     then marks the send copied in the sender's segment (below), waking
//     the sender only if it sleeps, and the send completes: a slot less
//     than a FIN message back would cost. Each byte is copied once, by the
//     receiver. A small message sent just before it to the same peer and
//     operation may ride in its slot (Endpoint.SendWithHead: a collective's
//     header before its first data message), so such a pair costs one
//     slot.
//
// A rendezvous send owns a word in its sender's segment. The receiver moves
// it from posted to claimed before it copies, and to copied after, then
// counts one more copied send in the sender's segment header, which the
// sender's poll watches; a Cancel moves it from posted to cancelled.
// Whoever moves it first wins, so a cancelled send is never read, and a
// Cancel of a claimed send waits for its copy to end.
//
// # Waiting
//
// A background goroutine drains the rings. When they are empty it sets a
// flag in its segment and waits on its eventfd through the Go netpoller; a
// sender that finds the flag set clears it and writes the eventfd. So an
// idle endpoint uses no CPU, and no OS thread is held in a blocking system
// call.
//
// Where a host's ranks are processes that outnumber the processors they
// can run on together, a waiting rank also spreads the spinning ranks over
// those processors (Config.NoBalance turns it off): it publishes in its
// segment the processor and thread it runs on, and where one processor
// runs at least two more recently active ranks than another, it migrates
// the highest of them there (binding the thread for a moment and restoring
// its affinity mask), since the scheduler leaves such a split (3 ranks on
// one core, 1 on the other) in place for a whole run. Connect leaves the
// Go runtime's threads in their scheduling class: a thread inherits its
// creator's, and the runtime's monitor thread starts threads that run the
// rank's goroutines, so a monitor in the idle class (SCHED_IDLE, tried in
// session 18) put them there too.
//
// # Failure
//
// A peer that closes says so (a BYE slot); a peer process that dies is found
// through its pidfd within [LivenessInterval]. Either way the requests to and
// from it fail with a [*transport.PeerError]. A slot that does not decode is
// treated like a dead peer.
//
// # Limits
//
// Every queue and table is bounded. Per rank: one inbound ring of
// Config.RingSlots slots of [SlotBytes] from each peer (default 256, 64
// KiB per sending rank, at most [MaxRingSlots]); slots waiting for a
// peer's full ring: Config.BacklogMax per peer (65536), beyond which a
// send fails; rendezvous sends in flight: Config.MaxPendingSends (65536),
// beyond which a send fails; messages taken from the rings before their
// receive is posted: Config.MaxUnexpected (65536) and
// Config.MaxUnexpectedBytes (16 MiB) over all peers, beyond which the
// rings are left unread (the senders' slots wait in their backlog) until
// receives are posted; ended operations remembered: [AbortMemory] (4096);
// world: [MaxWorldSize]; boards for the collectives' one-round small
// algorithms (transport.BoardHost, board.go): Config.Boards ([DefaultBoards],
// at most [MaxBoards]) of Config.BoardBytes ([DefaultBoardBytes]) at the
// end of the segment, one per communicator that uses them, whose pages
// take memory only once written. A rendezvous message is never copied
// into the transport: the receiver copies it from the sender's memory.
//
// # Requirements
//
// Linux 5.6 or later (pidfd_getfd), and permission to ptrace the peer ranks
// (PTRACE_MODE_ATTACH: same user, and with Yama's ptrace_scope 1 a rank
// allows its peers with PR_SET_PTRACER at Listen). Ranks must share a kernel
// and a PID namespace; [Listener.SameHost] tells whether an address qualifies.
// Elsewhere Listen returns an error and a job uses a network transport. On
// systems other than Linux the package builds but [Supported] is false:
// Listen and NewLocalWorld fail with an error that matches
// errors.ErrUnsupported.
package shm
