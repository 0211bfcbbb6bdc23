// Package udpio is MetaRoCE's batched UDP socket layer: the only code of the
// transport that touches a socket.
//
// A [Socket] moves datagrams in batches. On Linux, [Socket.ReadBatch] is one
// recvmmsg(2) and [Socket.WriteBatch] one sendmmsg(2) per [Config.BatchSize]
// messages, made with raw system calls on the socket's file descriptor
// through the runtime poller (so a blocked read parks its goroutine, and
// [Socket.Close] wakes it). On other systems the same API moves one datagram
// per system call. An unpolled socket (Config.Unpolled, Linux) is left out
// of the runtime poller, so that its arrivals wake nobody: a goroutine
// waits for a whole set of them with [Poller.Wait] and reads them with
// [TryReader], at its own pace.
//
// # Segmentation offload
//
// A [Message] is one datagram, or a train of datagrams of equal size
// (Message.Segment bytes each, the last one may be shorter) kept in one
// buffer:
//
//   - On write, a train goes to the kernel as a single UDP_SEGMENT (GSO) send
//     when the kernel supports it, and the kernel (or the NIC) cuts it into
//     datagrams. When GSO is off, or a send fails with EIO because the route's
//     device cannot segment, the socket turns GSO off for good and sends the
//     train as separate datagrams: trains are always safe to write.
//   - On read, with UDP_GRO the kernel may hand over several datagrams of one
//     flow as one train; Message.Segment then tells the segment size, and
//     [SplitSegments] walks the datagrams. Readers must handle both trains
//     and single datagrams, since either may arrive.
//
// [GatherTrains] is a pure function that packs runs of datagrams to the same
// address into trains of the datagrams' own slices (no copy), within the
// kernel's limits ([MaxSegments] segments, [MaxPayload] bytes) and
// [MaxTrainGather].
//
// # ECN
//
// Unless Config.DisableECN is set, every datagram is sent with ECN codepoint
// ECT(0) (IP_TOS / IPV6_TCLASS set to 2 on the socket), and Message.CE reports a datagram that a congested
// router marked Congestion Experienced.
//
// # DSCP
//
// Message.Class gives one datagram a DSCP (a traffic class a network may
// serve first, as MetaRoCE's control datagrams): an IP_TOS or IPV6_TCLASS
// control message in that datagram's own sendmmsg entry, with the ECN bits
// kept, so a batch of mixed classes is still one system call. On read,
// Message.Class is the DSCP the datagram arrived with.
//
// # Receive timestamps
//
// Unless Config.DisableTimestamps is set, the kernel stamps each received
// datagram with the time it arrived (SO_TIMESTAMPNS, CLOCK_REALTIME), read
// from its control message into Message.Received without allocating: the
// time a datagram then waited in the socket for a busy reader is the
// reader's scheduling delay, which a delay-based congestion control must
// not take for the network's queueing (see Caps.Timestamps).
//
// # ICMP errors
//
// On Linux a socket asks for the ICMP errors about the datagrams it sends
// (IP_RECVERR, IPV6_RECVERR; see Caps.ErrQueue), which an unconnected UDP
// socket otherwise ignores. [Socket.DrainErrors] reads them and returns
// the destinations that answered port unreachable: a peer whose socket is
// closed, typically because its process died. The kernel also reports
// such an error once to the next read or write of the socket
// (ECONNREFUSED); see DrainErrors for when to call it.
//
// # Limits
//
// Nothing here assumes an MTU: datagrams of any size up to [MaxPayload]
// bytes are passed through. A read buffer of [ReadBufferSize] bytes always
// holds a whole datagram or GRO train; a shorter buffer may get a datagram
// cut short, which is reported in Message.Truncated. The batch size is
// limited to [MaxBatchSize] messages and socket buffers to [MaxSocketBuffer]
// bytes.
//
// # Concurrency
//
// One goroutine may read while another writes. Concurrent calls of
// ReadBatch (or of WriteBatch) are serialised. After [Socket.Close], pending
// and later calls return an error wrapping [net.ErrClosed]. Neither call
// takes a context: a reader is ended by Close or by a deadline
// ([Socket.SetReadDeadline]), which keeps the per-call path free of
// allocation.
package udpio
