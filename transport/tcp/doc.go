// Package tcp is a [transport.Endpoint] over TCP: the fallback where UDP is
// blocked, and the baseline the MetaRoCE transport must beat.
//
// # Set-up
//
// Each rank calls [Listen], shares [Listener.Addr] with the others through
// its launcher, and calls [Listener.Connect] with every rank's address
// (index = rank). Lower ranks dial higher ones, Config.ConnsPerPeer
// connections per pair, and each connection opens with a handshake (magic,
// version, job id, world size, ranks, connection index) so that a stray
// connection or one from another job is refused with an error wrapping
// [ErrRefused]. [NewLocalWorld] does all of this for n ranks on loopback.
//
// # Protocol
//
// Every frame starts with a 44-byte header (kind, flags, tag, message id,
// length or offset, body length). Control frames and eager messages travel
// on a peer's first connection, so one peer's messages are matched in the
// order they were sent. A receive reads its message straight from the
// socket into the caller's buffer when the receive was posted first; only a
// message that arrives before its receive is buffered, and then copied
// once.
//
// Messages up to Config.EagerLimit are sent at once (eager), as long as
// the receiver has granted enough credit: each receiver lets each peer have
// Config.UnexpectedBytesMax/(Size-1) eager bytes outstanding, and returns
// credit as messages are received. Larger messages, and any message beyond
// the credit, use a rendezvous: the sender sends a request-to-send (RTS)
// with the length; when a receive matches it the receiver answers
// clear-to-send (CTS), and only then does the data flow, in
// Config.ChunkBytes chunks that alternate over all connections to the peer
// and into the receive buffer at their offsets.
//
// The rendezvous avoids a deadlock. Suppose rank 0 sends a large message
// with tag A and then a small one with tag B, and rank 1 receives B before
// A, as the contract allows. If the large message went eagerly, rank 1's
// reader would find no receive for it and could either buffer all of it
// (unbounded memory: a peer could send gigabytes nobody asked for) or stop
// reading until the receive for A is posted. Stopping would leave the
// message for B stuck behind A in the same TCP stream, and rank 1 would
// wait for B forever while A waits for rank 1: a deadlock. With a
// rendezvous only the small RTS sits in front of B, the reader moves on,
// and the bulk data waits on the sender's side until it has somewhere to
// go. The credit bound plays the same role for eager messages, so that a
// reader never has to stop reading.
//
// Abort travels as a control frame carrying the reason's text (up to
// [MaxReasonBytes]). Its receiver ends the operation as the aborting rank
// does: every pending request of the operation, a receive or a send, with
// any rank, fails (with a [*transport.RemoteAbortError]), later ones are
// refused, and the operation's data that arrives is dropped and its
// rendezvous requests refused, so that no sender is left waiting. A
// rendezvous send refused that way fails too. An operation that has
// already ended keeps its first error.
//
// # Goroutines and failure
//
// Each connection has a reader goroutine and a writer goroutine; writes of
// control frames are batched in a bufio.Writer and flushed when the queue
// runs empty. Reads and writes of up to 64 KiB are raw system calls on the
// socket's non-blocking descriptor (waiting for readiness through the
// runtime's poller as net.Conn does), which spares the runtime's monitor
// thread a wake-up per message. When a connection breaks, every pending request with that
// peer fails with a [*transport.PeerError] naming its rank. Close fails
// pending requests with [transport.ErrClosed], flushes what the writers
// hold, half-closes every socket and reads until the peer closes it too
// (all up to CloseFlushWait), closes every socket and waits for every
// goroutine to end. A peer fails its requests with a closed rank only once
// every connection from it has ended, so that it reads first what the
// closing rank sent last on each.
//
// Cancel of a request whose buffer is being read or written waits for that
// one eager message or chunk to finish.
//
// # Limits
//
// Every queue and table is bounded. Held eager bytes before their receive
// is posted: Config.UnexpectedBytesMax (64 MiB) over all peers, each
// peer's sender held to its share by credits (beyond it, a rendezvous);
// messages and rendezvous requests from one peer waiting for their
// receive: Config.UnexpectedMessagesMax (65536), beyond which the peer is
// failed with a protocol error; ended operations remembered:
// Config.AbortHistoryMax (1024); connections per peer: [MaxConnsPerPeer];
// world: [MaxWorldSize]; abort reasons: [MaxReasonBytes]. The writers'
// queues and the per-tag queues of posted requests hold references to
// the callers' buffers, one entry per request posted, plus control frames
// answering the peer's messages, which the bounds above bound. Each
// connection keeps a read and a write buffer of Config.IOBufferBytes.
package tcp
