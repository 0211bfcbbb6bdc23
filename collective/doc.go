// Package collective is gocoll's communicator and its collectives: what NCCL,
// Gloo and MPI offer to C and C++ programs, for Go.
//
// A [Comm] is a group of ranks over a [transport.Endpoint]. Its collectives
// are generic over the element types of [dtype] (float32, float64, bfloat16,
// float16, int8, uint8, int32, uint32, int64, uint64, and the fp8 types
// float8e4m3 and float8e5m2) and reduce with Sum, Prod, Min, Max or Avg:
//
//	AllReduce, Broadcast, Reduce, AllGather, ReduceScatter,
//	AllToAll, AllToAllV, Gather, Scatter, Barrier, Send/Recv
//
// Each has an Async form that returns a [Handle]; the blocking form is the
// Async form waited for. In-place forms are the same calls with the same
// slice passed as send and receive buffer (for AllGather and ReduceScatter,
// this rank's block of the larger buffer), as in NCCL.
//
// # Algorithms
//
// AllReduce: a ring (reduce-scatter then all-gather, one pipelined pass of
// 2(n-1) steps cut into Config.ChunkBytes chunks with Config.PipelineDepth of
// them in flight) for large messages, recursive doubling (log2 n rounds) at or
// below Config.SmallBytes; over shared memory (transport.Traits), large
// messages go direct instead: each rank reduces its segment from every
// rank's chunks at once and sends the result to all. AllGather and
// ReduceScatter: rings. Broadcast and
// Reduce: a pipelined chain for large messages; for small ones (at or
// below Config.SmallBytes) a dissemination Broadcast (ceil(log2 n)
// rounds, rank r sending to r+d, d from the largest power of two below n
// down to 1: farthest first, the data moving as in a binomial tree) and a
// Reduce run as AllReduce's recursive doubling, the result kept at the
// root (a binomial tree when forced, or where the cost model picks it for
// a buffer above the 4064 bytes that travel with a header); over shared
// memory, a large Broadcast goes direct from the root to every rank, each
// receiver copying it once, all at once (tune.LocalBroadcast). AllToAll(V): n-1 rounds of pairwise
// exchange. Barrier: dissemination.
// Scatter: direct above Config.SmallBytes in all, a dissemination at or
// below; Gather: direct, or a dissemination all-gather kept at the root
// while all of it fits in one message header's 4064 inline bytes.
// AllReduce, Broadcast and Reduce also have a pipelined double binary
// tree (AlgoTree: half the buffer down each of two trees laid out in the
// topology's ring order), and AllReduce a
// hierarchical form (AlgoHierarchical: reduce-scatter within each host,
// the shard owners all-reduce across hosts and sites, all-gather back).
// Where Config.Topology spans hosts, the automatic choice is the fastest
// in collective/tune's cost model instead of the rules above. Config (or
// GOCOLL_ALGO, through the launcher) forces an algorithm where there is a
// choice.
//
// The board (AlgoBoard). Where every rank of a communicator is on one
// host over shared memory and the transport has a board free for it
// (transport.BoardHost; shm's Config.Boards), an AllReduce of at most
// Config.BoardBytes, a Broadcast of at most Config.BoardBroadcastBytes,
// an AllToAll of blocks of at most Config.BoardBlockBytes and a Barrier
// run in one round on the communicator's
// boards: each rank writes its header and data once into its own board
// and reads every other rank's straight from that rank's memory, with no
// message; the AllReduce folds the contributions in rank order, (((x0 op
// x1) op x2) ...), so every rank computes the same bits. Above
// Config.BoardSplitBytes the AllReduce takes a second round instead of
// every rank folding every buffer: each rank folds its n-th of the
// elements, in rank order, publishes it on its board, and copies the
// others' out. Every rank reads
// every header, so a mismatch among ranks on the board fails every one of
// them in that call. A rank whose arguments differ enough to take the
// point-to-point path instead (a larger count) sends its header as the
// point-to-point algorithms do to the ranks they talk to; the ranks
// waiting on the board look at the headers that came once their wait
// lasts a millisecond, and a point-to-point wait that lasts as long
// looks at the boards' headers of its call; the one that finds the
// mismatch aborts the call on every rank (and writes its failure on its
// board), so all end with errors then, not at the deadline
// (Config.Timeout and the stall report still bound a case no header
// reaches). The first board-sized call of a communicator sets the
// boards up (a point-to-point AllGather of each rank's board) and runs
// point-to-point; a communicator whose members do not all get a board
// stays point-to-point. Close gives the board back once every member has
// read what this rank wrote.
//
// # Determinism
//
// For a given world size, algorithm, chunk size, root and (for the tree and
// hierarchical algorithms) placement, results are bitwise
// identical from run to run: every algorithm combines the contributions in an
// order fixed by those alone (never by arrival order), and the recursive
// doubling, like the hierarchical algorithm's exchange between two shard
// owners, combines lower rank with higher so that all ranks compute the same
// bits. Changing the world size, the algorithm (including through
// Config.SmallBytes) or the chunk size may change the rounding of
// floating-point sums. Avg is Sum followed by one division by n.
//
// # Errors
//
// No call panics on bad input or hangs silently. Every operation has a
// deadline: its context's, or Config.Timeout. Before trusting a peer's data,
// a rank checks the peer's operation header (operation, count, type,
// reduction, root, algorithm, chunk size); ranks that called different
// operations, or the same one with different arguments, get a
// [*MismatchError] naming both calls, and the ranks that did not see the
// mismatch themselves get an error naming the rank that did. Invalid
// arguments on one rank (root out of range, short or nil buffers, partly
// overlapping buffers, an invalid type or op, a Split color below
// [NoColor]) are an error there and, through an abort of the operation, on
// every other rank, promptly rather than at the deadline; so is a
// cancelled context. Every argument is checked inside the operation, after
// it has taken its sequence number, so a failed call counts on every rank
// and the communicator stays usable: the next call meets on every rank.
//
// What a return says. In the confirmed protocol, which every call runs
// unless it is an eager rooted call (below), no rank returns success from
// an operation another rank failed: each rank's completion depends on
// every other rank's checks, so a call that returns nil says that every
// rank called the same operation with matching arguments, and a mismatch
// is an error on every rank in that same call. AllReduce, AllGather,
// ReduceScatter, AllToAll and Barrier get this from their own data
// rounds, and so do the small Broadcast, Scatter and Gather
// (dissemination) and Reduce (recursive doubling) the communicator picks
// by itself: they cost no round beyond the data's. The other rooted
// forms, in which some ranks finish without hearing from every other (a
// chain's or tree's root and leaves, a forced binomial tree, a larger
// Gather or Scatter), end with a confirming dissemination round,
// ceil(log2 n) small messages per rank; AllToAllV, whose per-pair counts
// only the pair can compare, checks every peer's header before it sends
// data. Send and Recv keep their pair in step the same way; a peer
// outside the communicator is an error on the caller alone. Operations
// on a closed communicator fail with [ErrClosed] on that rank alone, and
// [New] with an invalid Config fails on its rank alone: neither takes an
// operation number.
//
// Eager rooted calls. A rank with nothing to receive in a rooted call,
// the root of a Broadcast (any algorithm but the tree and hierarchical
// ones) or of a dissemination Scatter (at most Config.SmallBytes in all),
// or a non-root rank of a direct Gather (above 4064 bytes in all),
// returns as soon as its buffer is reusable, as MPI's eager protocol lets
// it; a receiver of a dissemination or direct Broadcast (the automatic
// choice on one host, and at or below Config.SmallBytes everywhere)
// returns as soon as its own data has arrived, from a rank whose header
// it checked and found matching, and has been copied into its buffer (a
// receiver that forwards the data, in the dissemination, waits too for
// its forwarding sends that read its buffer: those beyond the 4064 bytes
// that ride, copied, in a header message). Either returns early only when
// the call is in steady state: the communicator's last 3 calls
// on this rank had the same header as this one (operation, count, type,
// reduction, root, algorithm, chunk size, channels) and completed matched,
// with no error or stall since, and the call is blocking and the only
// one running (an Async call counts from the moment it is issued), and it
// moves at most 64 KiB (a larger call runs the confirmed protocol). A
// root's data then rides in its header messages (up to 4064
// bytes a peer) or in a copy the call keeps, and the rest of the call,
// the check of its peers' headers and the wait for the messages it does
// not need (the empty ones of the dissemination and the confirming
// round), is deferred:
// the rank's next call on the communicator settles it before it sends
// anything, as do [Comm.Close] and [Comm.Abort]. The settling waits until
// the earlier call's own deadline (its context's, else Config.Timeout);
// if the next call's context ends first, only that call fails, with its
// own error, and the earlier call stays open for the call after, Close or
// Abort. Work on a communicator made by Split does not settle it: an eager
// call on the parent followed only by work on a child stays open, holding
// up to 64 KiB, until the parent's next call or Close, and its mismatch,
// if any, is reported then. At most one call is
// deferred, so an eager rank runs at most one call ahead of the others'
// confirmation and holds at most one call's copy. The wire traffic is
// the same either way, so ranks need not agree on which of them is eager.
// A nil from an eager call says that this rank's part is done and its
// buffer free (a receiver's holding the root's data: every rank on its
// path from the root had a header matching this rank's), not that the
// others matched. A mismatch in it is reported:
//   - in the call, by the rank whose arguments differ (its header differs
//     from its last calls', so it runs the confirmed protocol) and by the
//     ranks that receive their data from or through it; an eager rank
//     whose data came from matching ranks returns nil;
//   - at the next call on the communicator of every rank that returned
//     nil, which fails, naming the earlier call and its mismatch, before
//     it sends anything; its failure ends that call on every rank, so
//     every rank has an error by its next call at the latest;
//   - at such a rank's Close, if it makes no further call (Close returns
//     the error); the wait is bounded by the call's own deadline, like any
//     operation's.
//
// The first call of a header, and every call after a change of header, an
// error or a stall, runs the confirmed protocol, so a single mismatched
// call, or the first one of a loop, is an error on every rank in that
// call. A Barrier that completes without error is no change of header
// here: it has no arguments to mismatch, and calls of one header on both
// sides of it stay one run (a loop timed after a warm-up and a Barrier is
// eager from its first call); a mismatch in the call after it is reported
// as in any eager call, above. [Comm.EagerReturns] counts the calls that returned early. Reduce,
// whose non-root ranks only send in its chain and binomial forms (the
// automatic choice sends them only above Config.SmallBytes, beyond what
// an eager call copies), always runs the confirmed protocol.
//
// Broadcast on the board. A Broadcast on a communicator's board (at most
// Config.BoardBroadcastBytes, see Algorithms) runs in one round: every rank writes
// its header into its board, the root its data too, and each receiver
// copies the data from the root's board. Outside steady state (as above:
// the first 3 calls of a header, after an error or stall, Async calls)
// every rank also checks every other's header before it returns, so a
// mismatch is an error on every rank in the call. In steady state it is
// eager: the root returns once its header and data are on its board (its
// buffer is free at once), at most 4 calls (the board's slots) ahead of
// its slowest receiver, or Config.BoardRing calls (256 by default: the
// board's ring of small slots) for a Broadcast of at most 64 bytes, since
// its next write of a slot waits until every member is done with that
// slot's last call (so a receiver descheduled for a while finds many
// calls ready and takes them without waiting); a receiver returns once it
// has checked the root's header against its own, found it matching, and
// copied the root's data. It checks the next receiver's header (rank r+1
// mod n, unless that is the root) at its next call on the board, before
// that call runs (waiting for it there only if that call reuses the
// slot), or at Close, and frees the slot for reuse only then. Every two
// ranks are linked by a chain of such checks, so a mismatch, different
// roots included, is seen by at least one rank. A nil from an eager root
// says its part is done, not that the others matched; from an eager
// receiver, that it has its root's data and its root matched. A mismatch
// is reported:
//   - in the call, by each rank that sees a differing root header or is
//     not in steady state (its header changed), and by any rank that still
//     waits on such a rank's board when it fails (its failure is written
//     there);
//   - at an eager receiver's next call on the board, or its Close, if its
//     next receiver's header differed: that call fails before it runs,
//     naming the earlier call, and its failure ends it on every rank;
//   - at the eager root's first call on the communicator, of any kind,
//     that starts after a receiver failed the call (a receiver on the
//     point-to-point path, whose arguments differ, finds the mismatch at
//     its wait's first tick, 1 ms): before it runs, it fails, naming the
//     earlier call and the receiver's reason, and its failure ends that
//     call on every rank. A receiver slower than the root has not failed
//     it yet when the root's next calls start; the root's board call that
//     reuses the slot (4 calls later, or Config.BoardRing for a ring
//     call) waits until every member is done with the call (also a
//     member whose arguments put it in the other kind of slot, or that
//     failed it before it reached the board), and fails there at the
//     latest. A rank's board keeps its last two failures: if the
//     receiver has failed a later call by then, the root still finds
//     this one; if two, it reports that it cannot tell, unless it has
//     failed a call since itself;
//   - at the eager root's Close, if a receiver had failed by then (Close
//     returns the error; it does not wait for slower receivers).
//
// So every rank gets an error by the call that reuses the failed call's
// slot (4 calls later, Config.BoardRing for a ring call) at the latest:
// the root's failure of that call ends it on every receiver, whose checks
// of the earlier call matched. No wait
// of one rank on another outlasts that: a call's end on the board tells
// every member it is done with every slot (board.go), whichever slot its
// arguments put it in.
//
// A member that closes the communicator writes on its board how many calls
// it issued (x: it runs none numbered x or above) before it tells the
// others it reads their boards no more. A later call of another rank
// fails, "rank m closed this communicator after operation #x-1", where it
// would wait on that member: its write of a slot the member had read
// (the root's too, whose eager calls run ahead), its wait for the
// member's slot or header; so a root runs at most the ring's depth (4
// calls, Config.BoardRing for a ring call) past a receiver's Close, those
// calls returning nil as before it, and fails at the latest at the call
// that reuses a slot; every other rank fails at its first call that
// waits on the closed member, or on a rank that failed so. The same holds
// once another communicator has claimed the closed member's board: an ack
// counts only while the board holds this communicator's id.
//
// [Comm.EagerReturns] counts these calls too.
//
// # Hangs
//
// Each rank keeps a flight record of its last [FlightRecords] operations
// ([Comm.FlightRecord]): communicator, sequence number, collective,
// algorithm, size, state, start, and, for one that blocks, the rank it
// waits on and the peers whose header has not come (they have not called
// it). An operation that runs past Config.StallTimeout (default 30 s) is
// reported once, to Config.OnStall or standard error, as a
// [StallReport] naming the rank that never arrived or the one it waits on,
// and goes on waiting; Config.Timeout (or the context) ends it. A
// communicator reports at most once per StallTimeout (and per second), so
// that a thousand stalled operations give one report, which lists the
// oldest 16 pending operations and counts the rest.
//
// One kind of call is not recorded one by one: a blocking Broadcast of at
// most 64 bytes on the board in steady state that, when called, finds
// nothing running on its communicator and everything it needs already
// there (it neither waits nor fails) runs without the generic operation
// (the lean path), and the flight record holds, per communicator, only
// the latest such call (done, its start and end one instant), placed
// among the others by its start; that start is read from the clock once
// per 16 such calls in a row, so it is the call's own or that of one of
// the at most 15 lean calls just before it on its communicator with no
// other record started in between (so it sorts after every record that
// started before the call); it stays after Close unless a later
// call of the communicator is there. Such a call cannot stall. A call
// that must wait or fails takes the generic path and is recorded as
// every other; while an OnOpEnd function is set, no call takes the lean
// path.
//
// # Abort and Shrink
//
// [Comm.Abort] ends every pending operation of a communicator on every
// rank at once, each failing with an error wrapping [ErrAborted] that
// names the rank that aborted, and releases what the communicator owns.
// [Comm.Shrink] (as ncclCommShrink) gives the survivors of a failure a new
// communicator without the failed ranks, agreed through Config.Store.
//
// # Limits
//
// Every queue, buffer and table a communicator keeps is bounded; the
// transports bound theirs (see each transport's package doc):
//   - operations running at once on one communicator on one rank (Async
//     calls, blocking calls from several goroutines): [MaxRunningOps]
//     (4096); one beyond fails, on every rank, saying so
//   - requests one operation posts: a ring posts a step's chunks, at most
//     32 MiB of them or Config.PipelineDepth chunks if more; a chain
//     PipelineDepth chunks; other algorithms one receive and one send per
//     peer and round, and one header receive per peer it talks to
//   - scratch buffers: at most 4 x [PipelineDepthMax] chunks
//     (Config.ChunkBytes each, [ChunkBytesMax] at most) kept between
//     operations, plus one buffer as large as the largest asked for (an
//     operation's message size at most); header buffers
//     (4 KiB: a header and 4064 inline bytes; two per peer an operation
//     talks to) come from one process-wide pool
//   - the flight record: [FlightRecords] (128) operations per rank, shared
//     by a world communicator and those Split makes from it
//   - cached automatic algorithm choices: one per collective kind, root
//     and priced message size (PricedBytes: 8 an octave, at most
//     kinds x Size x 8 x 64); a miss runs the cost model once in the
//     call that meets it, on every rank (tune.Predict over the whole
//     topology: at 4096 ranks about 40k allocations and 24-36 MB, some
//     40-60 ms of CPU; tune's BenchmarkPredict4096)
//   - an abort ends the running operations and [AbortAhead] (64) numbers
//     ahead of each kind, at most 1024 of those, on every peer
//   - Shrink writes a proposal (a list of ranks, at most about 8 bytes per
//     rank) per caller and one decision per Shrink to the store, which
//     keeps them until the job ends
//
// Every member must issue collectives on a communicator in the same order, as
// with NCCL and MPI; independent orders belong on separate communicators
// (see [Comm.Split]).
package collective
