// Package metaroce is the core of MetaRoCE, gocoll's multipath transport
// over UDP, written as a pure state machine in the manner of quinn-proto:
// it reads no clock, starts no goroutine and touches no socket. A driver (a
// UDP adapter, or a simulated fabric in tests) feeds an [Endpoint] the
// datagrams that arrive and the time, and polls it for datagrams to send
// ([Endpoint.PollTransmit]), for the next timer ([Endpoint.NextTimeout]) and
// for events ([Endpoint.PollEvent]). Times are time.Duration values since
// any epoch the driver picks. The packet formats are in package wire.
//
// # Connections, streams and messages
//
// An Endpoint holds one connection per peer node. [Endpoint.Connect] sends
// HELLO; the peer answers HELLO-ACK, and both use the smaller of their path
// counts and datagram sizes and learn each other's message window and
// unexpected-byte budget. Each side names the connection by its own id and
// puts the other's id in every packet. CLOSE tears a connection down (preceded by a
// final ACK, so that the peer completes the sends that arrived whole), a
// peer silent for Config.IdleTimeout fails it (keepalive probes keep a
// healthy idle connection alive), and so does, sooner, a driver's report
// that the network found the peer's socket closed
// ([Endpoint.HandlePeerGone]: an ICMP port unreachable, its process died),
// and a peer that answers nothing on any path for Config.PeerTimeout (2 s)
// after a probe (at most a tenth of it after the last packet heard) while
// an operation waits on it ([PeerTimeoutError]: its
// host vanished, its process stopped, every path is cut). While something
// waits, the connection probes the peer often enough that a live one,
// which answers probes whatever its application does, is never failed so,
// nor one whose process was not running for less than PeerTimeout.
//
// A connection that ends for any reason but this side's Close (the peer's
// CLOSE, ErrPeerGone, a timeout) fails its posted receives and sends, but
// keeps the messages that had arrived whole with no receive posted, and
// its final counters: [Endpoint.PostRecv] still delivers them (and refuses
// any other key with the error that ended the connection), ConnStats
// still reads, until [Endpoint.Close] of the ended connection forgets it
// (at most Config.MaxConns are kept). Messages only partly received are
// lost with the connection. A peer that sent its last messages, saw them
// acknowledged and left has thus delivered them, however late the
// receives are posted.
//
// The handshake times its round trip (a HELLO-ACK echoes the HELLO's
// timestamp; the acceptor times its first HELLO-ACK to the first packet
// back) and seeds every path's RTT with it, deviation half of it, until the
// path's own first sample: no data flows before, and no path times out
// within the handshake's RTT, at any distance.
//
// A connection carries any number of messages, 0 bytes to 1 TiB, matched to
// posted receives by a (stream, msg) key the caller keeps unique among the
// connection's messages in flight ([Endpoint.Send], [Endpoint.PostRecv]).
// The sender also numbers its messages (MsgSeq). A message travels as
// pieces of one datagram each; every piece carries the key, MsgSeq, the
// total length and its offset, so the receiver copies it straight into the
// posted buffer wherever it lands, in any order, with no reorder buffer. A
// message completes when its last piece has arrived; the send completes
// when the receiver has acknowledged every piece.
//
// Pieces that arrive before their receive is posted are held, within a
// budget per connection that starts at Config.UnexpectedBytes and grows with
// the bandwidth-delay product up to Config.UnexpectedMax (a new message is
// unconfirmed for a round trip, so a fixed budget would hold a long fat
// path to it a round trip). The sender keeps to that budget by
// credit: a piece sent before the receiver confirmed the message (flag
// "unconfirmed") counts against a credit limit that every ACK carries and
// that grows as the receiver places or drops such bytes. When a receive is
// matched, the receiver grants the message's MsgSeq in its ACKs and the
// rest flows without credit. A message that finds no credit is announced
// with an empty piece, so a later message whose receive is posted is never
// stuck behind earlier unexpected ones. The receiver's message window
// (Config.MsgWindow) bounds the messages a sender may have started beyond
// the oldest one the receiver has not finished.
//
// # Paths
//
// A connection has 1 to 256 paths (Config.Paths). Path i runs from the
// local socket i to the peer's socket i, so each path has its own UDP
// source port and so its own ECMP route. Each path has its own sequence
// space, SACK state, RTT estimate (smoothed, variance, minimum) and
// congestion window. The scheduler sends each piece on the usable path with
// the most room in its window, so faster and emptier paths carry more; a
// message of one piece takes the first good path with room instead, so that
// small messages and their ACKs share one path (and one reader, in a driver
// with a reader per socket).
//
// A connection's first window, Config.InitialWindow packets, is shared
// among its paths (so many connections opening at once do not flood the
// fabric before their first ACK); each path's window grows by slow start
// until the first congestion signal, then by one packet per window
// acknowledged (srtt/10ms packets of at least 9000 bytes beyond 10 ms, at
// most 16 and an eighth of the window, so that a long path regains a cut
// as fast as a short one; a window under 16 packets shares its step among
// the connection's paths, so that many connections of many paths through
// one shallow buffer grow as one flow each), and only while it limits the
// sender (half of it in flight), up to wire.MaxSACKSpan packets. Data is
// paced at twice the windows' rate (cwnd/srtt) in slow start and 1.25
// times after, in bursts of at most 1 ms, so that a round of slow start at
// a long RTT does not arrive at a shallow buffer all at once.
//
// A window is cut at most once per round trip: by 0.8 when the receiver
// reports new ECN-CE marks on the path; when the RTT and the one-way delay
// have both stood above their minima by the delay target for half an RTT
// (the larger of Config.DelayTarget and half the base RTT, at most 5 ms:
// buffers hold a bounded time of their rate, often 20 ms; on a path of 1 ms
// or more with no other flows' queue, up to 4 times the scatter of
// successive RTT samples, also at most 5 ms, so that per-packet jitter is
// not taken for a queue), by what drains
// that queue (0.85 below 1 ms of RTT; from 0.5 to 0.95 above, so that a
// 100 ms path with a 5 ms queue loses a few per cent, not 15); and by 0.7
// for a loss while the path shows a queue: RTT (under jitter, its recent
// minimum too: jitter lets some packets through fast, a queue none) and
// one-way delay above their floors by the delay target and by 3/4 of the
// deepest queue of the last 5-10 s. A tail drop comes when the buffer is
// full; a random loss at any depth, which the delay signal keeps within
// the target. A loss on a path without such a queue is taken as
// corruption or random drop and
// repaired without a cut, which is what keeps goodput at 1-5% random
// loss, unless it is heavy (4 or more packets and a third of those resolved
// in two round trips): then the path's base RTT is wrong (measured through
// a queue that already stood, as a latecomer to a full buffer does) and it
// is cut by half (in slow start by 0.7), so that the queue drains and the
// base is seen again. The RTT of congestion losses is the path's ceiling
// for 5 s: after heavy loss, or under a standing queue (the minimum above
// the floor), an RTT within an eighth of the ceiling is a delay signal;
// a heavy loss ceiling so near the floor that no RTT escapes it only
// within 128 RTTs of the path's last congestion loss (random losses that
// look heavy at a small window must not pin the path at one packet).
//
// A path competes with a loss-based flow (TCP) that keeps its buffer full:
// under a standing queue, after two congestion losses or when it starves
// (its rate under an eighth of the median of the connection's paths, no
// faster path of about its RTT, which would be a sibling on its own link),
// it ignores the delay signal for at least 2 s (32 RTTs), cuts for loss
// only, and grows by one packet per window shared among the connection's
// competing paths, as one TCP flow. It stops when its minimum RTT stays
// near the ceiling (a loss-based flow's sawtooth drains the queue after
// each loss; a full one means many small flows, an incast) or when it
// loses one packet in 8. The cut that ends slow start on a delay signal goes to what the
// path delivered in its last RTT (its bandwidth-delay product), at least
// half the window: slow start hears of its queue a round trip late.
// Queueing must show both in the RTT and in the path's relative one-way
// delay (the receiver's arrival time, from the ACK's timestamp, less our
// send time): an ACK carries the blocks of several paths and comes back on one of
// them, so with paths of unequal delays a path's RTT swings with the way
// back, and the one-way delay alone would follow a drift of the clocks.
// The minima are those of the last two 500 ms windows, so a path whose
// route got longer has its new base within a second; the floors, which
// judge losses, those of the last two 5 s windows, so that a queue other
// flows keep full for seconds (TCP, an incast) is still seen as one.
//
// Path states: good; skip, for about an RTT after a CE mark or congestive
// loss (used only when no good path has room); suspect, after a
// retransmission timeout, when its packets move to other paths and it
// carries only probes, one per RTO; dead, after Config.DeadAfter unanswered
// probes, probed every Config.ProbeInterval or RTO if longer, backing off
// to 8 times that. Any acknowledgement or probe reply on a suspect or dead
// path brings it back, a reply to any probe sent since it went suspect
// included (at a long RTT the reply to one probe comes after the next has
// left). Every timer follows the path's RTT: none is shorter than srtt +
// 4 rttvar. A connection whose every path is dead keeps probing them.
//
// # Arrival times
//
// A driver may hand a datagram over with the time it arrived as well as the
// time it is handed over ([Endpoint.HandleDatagramAt]: the kernel's
// receive timestamp, converted to the driver's time base); a busy host
// leaves datagrams in the socket for hundreds of microseconds, which a
// delay signal of 20 us must not take for the network's queueing (as
// Swift, SIGCOMM 2020, splits fabric from endpoint delay). A DATA packet's
// arrival starts the hold its ACK reports (wire.AckBlock.Delay) and times
// its one-way delay. A path keeps two views of its round trip. The
// fabric's ends at the ACK's arrival and leaves out the Delay, so neither
// endpoint's scheduling: it feeds only the delay signal (the delay cut's
// recent minimum against the minimum, the one-way delay's queue, the loss
// classifier's queue, the ceiling). The full one ends when the ACK is
// handed over and leaves out only the part of the Delay a receiver holds
// on purpose (at most max(AckDelay, 250 µs)): the loop the endpoints live,
// which sizes the RTO, the loss timer, the window's growth, pacing and the
// ACK hold; the RTO and the loss timer also allow for the longest hold of
// the endpoints seen lately (the peer's Delay plus the ACK's wait in our
// socket, over one to two minWindows, up to 5 ms), since one sample holds
// only one loop's lateness. Where the two meet: the delay target is half the loop without
// the fabric's queue (the full smoothed RTT less the fabric's excess over
// its floor), a delay cut takes its share of the fabric's part of the
// window only, and pacing lets out bursts of at most the fabric's RTT at
// the windows' rate, so that a window whose ACKs waited in a busy host's
// socket is spread over the loop instead of queueing in the fabric.
// Without arrival times the two views are one, as before. Timers, the last
// time heard from the peer and every other state take the time of
// hand-over, so time never runs backwards; a datagram handed over by
// [Endpoint.HandleDatagram] arrived when it is handed over.
//
// # Acknowledgements and loss recovery
//
// The receiver acknowledges every Config.AckEvery DATA packets, at once for
// an out-of-order arrival, a message's last piece (with
// Config.DelaySmallAcks, only of a message of more than one piece; on a
// long connection, also the piece that completes a message) or a
// control piece, and otherwise within Config.AckDelay (with
// DelaySmallAcks, one-piece messages count towards 32 packets rather than
// AckEvery). On a connection whose RTT is 1 ms or more, ACKs are coalesced
// (ackhold.go): held for an eighth of the RTT (at most 250 µs, at least
// AckDelay) or until 8 new packets over all paths, and sent on the path of
// least one-way delay, so that one ACK opens the window of every path at
// once; the sender's timeout and its window under the peer's rate allow for
// the hold. With Config.PiggybackAcks, an ACK still waiting for its delay
// rides on the next DATA to the peer that has room for it (flag
// wire.FlagAck: a block for every path due and every grant owed) instead
// of going alone; with Config.AckRoom on both sides, every piece leaves
// room for an ACK of two blocks, so a connection with DATA both ways sends
// few ACKs of its own. Posting a receive sends an ACK at
// once only if it owes a grant or the sender may be short of credit. An ACK carries, for each path
// that received since the last ACK (since the last two if it has a hole
// among its newest 256 arrivals, or received a duplicate), the
// cumulative sequence number, a 256-bit SACK bitmap (just above it, or
// ending at the newest arrival when that lies further up), the echoed
// send timestamp of the latest arrival with the time it was held, and the
// count of CE marks seen; plus the target rate, the credit limit, the
// receiver's lowest unfinished MsgSeq and any grants. A sender resolves a
// packet when any ACK reports it (each is reported by the ACKs that
// report its path while it is among the newest 256 arrivals). A sender never has more than
// wire.MaxSACKSpan (16384) unresolved packets on a path, enough for a
// path's bandwidth-delay product of 23 MB at 1452-byte datagrams; the
// receiver gives up on holes that far behind the newest arrival, which the
// sender has resolved by then.
//
// Because each path is its own ordered sequence space, reordering across
// paths is normal and never counts as loss. A packet is lost when three
// packets sent after it on the same path were acknowledged, or one was and
// 9/8 of an RTT has passed. Only that packet's piece is resent, on whichever
// usable path has the most room (never a suspect one), with a new sequence
// number. A path's retransmission timeout (srtt + 4 rttvar, at least
// srtt/4, plus the ACK delay, at least Config.MinRTO, doubling with each
// timeout until an ACK of new data up to MaxRTO) is the last resort; before
// a path's own first sample it is at least twice the longest RTO among the
// connection's sampled paths, or 1 s while none has one. A timeout
// declares the path's packets in flight lost, except the first one on a
// silent connection (another path overdue too, none acknowledged since the
// oldest packet's ACK was due), which declares only the oldest; an ACK
// that then covers a packet a timeout declared lost takes its resend back
// if it has not left (lateack.go). A sender held back by credit, grants or the
// message window with nothing in flight probes for the ACK that frees it. Duplicates, from the
// network or from resends, are recognised by sequence number and by piece
// and placed only once. Every datagram carries a CRC32C; damaged, truncated,
// unknown or malformed datagrams are counted ([EndpointStats]) and dropped.
//
// # Receiver-driven rate
//
// An endpoint divides its receive capacity equally among the connections
// that sent it data within Config.SenderIdle and returns each sender's
// share in every ACK. The capacity is Config.RecvCapacity if set; if not,
// it is unlimited (ACKs carry no limit) until the endpoint sees a queue
// standing in front of it while two or more senders are active, and from
// then on the highest aggregate arrival rate seen in such an interval. The
// endpoint watches that inbound queue through the relative one-way delay of
// arriving packets (arrival time minus the sender's timestamp, above its
// minimum; the clock offset cancels) and, while a queue stands above the
// delay target, hands out proportionally less so that it drains. A sender
// caps its total window across paths at share x (base RTT + ACK delay) and
// paces its packets at the share. A new sender learns its share from its
// first ACK, one round trip after it starts.
//
// # Limits
//
// Every table is bounded: connections (Config.MaxConns), queued sends
// (MaxSends), posted receives (MaxRecvs), started-but-unfinished incoming
// messages (MsgWindow), held unexpected bytes (UnexpectedMax), unresolved
// packets per path (wire.MaxSACKSpan, 16384, with rings that grow to it as
// the window needs), paths (256). The budget bounds only the bytes sent
// before their receive is confirmed: once the receive is matched, the
// grant lifts it for that message within a round trip. Received-piece sets are run-length
// encoded, so their size follows the holes in flight, not the message
// length a peer declares.
package metaroce
