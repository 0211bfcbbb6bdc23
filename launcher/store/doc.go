// Package store is gocoll's rendezvous store: a small key-value store that
// the ranks of one job use to find each other before the fast transport is
// up, and the bootstrap collectives built on it.
//
// The [Store] interface has Set, Get (which waits for the key), TryGet, Add
// (an atomic counter), CompareAndSet, Wait (for several keys) and Delete.
// Every call takes a context.Context, and every wait ends at ctx's deadline
// with a [*MissingKeysError] naming the keys still missing. Implementations:
//
//   - [MemStore], in this process's memory, for tests and for ranks that are
//     goroutines of one process;
//   - [Server] and [Client]: the same store served over TCP by the launcher
//     or by rank 0, like PyTorch's TCPStore. The job's secret key ([JobKey])
//     never crosses the wire: each connection opens with a challenge and
//     response in which both sides prove they hold it, and every frame
//     after that carries a tag keyed by it. A client without the key is
//     refused with [ErrBadJobKey] and counted ([Server.Stats]);
//   - [Prefixed], a namespaced view of another Store, so that jobs, restart
//     rounds and communicators do not see each other's keys.
//
// On top of any Store, [AllGather], [Barrier] and [Broadcast] are the
// bootstrap collectives (exchanging endpoint addresses, for one), and
// [Heartbeat] with [Liveness] and [Watch] tell which ranks stopped beating.
//
// # Limits
//
// Every store is bounded by [Limits] (key and value sizes, number of keys,
// bytes stored, blocked waits); a [Server] also by [Config] (connections,
// frame size). Exceeding a limit fails that one call with [ErrLimit], never
// the store. Nothing else queues: a Server answers one connection's
// requests one at a time and writes each answer before it reads on (a
// blocked Get or Wait waits in a goroutine of its own, at most
// MaxPendingWaits of them over all connections), and a Client's calls in
// flight are those its callers have made at once, each blocking its
// caller, in frames of at most ClientConfig.MaxFrameBytes.
//
// # Wire protocol
//
// A [Client] keeps one TCP connection to the [Server] and may have many
// requests in flight on it; each request carries an id that its response
// repeats, and responses may come in any order. All integers are big-endian.
// A frame is a 4-byte length L followed by L bytes; L is at most the
// server's [Config.MaxFrameBytes] (which the server announces in its
// welcome) plus the tag for requests, and the client's
// [ClientConfig.MaxFrameBytes] plus the tag for responses.
//
// Handshake. K is the job key; Derive is jobkey's HKDF-SHA256 with
// purpose "gocoll/store/v1"; Tag is HMAC-SHA256 over length-prefixed parts
// (package internal/jobkey); nonces are 16 random bytes.
//
//	server -> client  challenge: version 2, nonceS (L = 17)
//	client -> server  auth: version 2, nonceC, proofC (L = 49)
//	server -> client  welcome: a response frame, id 0, status ok,
//	                  items proofS and MaxFrameBytes (4 bytes);
//	                  or status bad job key (or limit, protocol) and close
//
//	kc = Derive(K, "client to server", nonceC, nonceS)
//	ks = Derive(K, "server to client", nonceC, nonceS)
//	proofC = Tag(kc, "store handshake proof")   (32 bytes)
//	proofS = Tag(ks, "store handshake proof")   (32 bytes)
//
// The server checks proofC before it proves anything, so a stranger learns
// only a random nonce; the client checks proofS, so a server without the
// key cannot pass for the store. A connection must finish its handshake
// within [Config.HandshakeTimeout], and at most [Config.MaxHandshakes] may
// be in theirs at once, [Config.MaxHandshakesPerHost] from one address (a
// newer one closes the oldest, of its own address if that one is full).
//
// Every frame after the handshake ends with a 16-byte tag: the first 16
// bytes of Tag(key, i, body), where key is kc for requests and ks for
// responses, i is the frame's number in its direction (from 0, not sent)
// as 8 bytes, and body is the frame's bytes between L and the tag. A frame
// whose tag does not verify (forged, altered, replayed, reordered) is
// answered with a protocol error and closes the connection.
//
// Request frame:
//
//	offset  size  field
//	0       4     L, the length of the rest of the frame
//	4       1     protocol version: 2
//	5       1     op (table below)
//	6       8     request id, unique among the connection's pending requests
//	14      4     wait timeout in milliseconds, 0 for none (get and wait only)
//	18      2     item count N
//	20      ...   N items, each a 4-byte length and that many bytes
//	L-12    16    tag
//
// Response frame:
//
//	offset  size  field
//	0       4     L, the length of the rest of the frame
//	4       1     protocol version: 2
//	5       1     status (table below)
//	6       8     id of the request answered; 0 for an error about the whole
//	              connection, after which the server closes it
//	14      2     item count N
//	16      ...   N items, each a 4-byte length and that many bytes
//	L-12    16    tag (none on the welcome and on errors in the handshake)
//
// Ops, with the items of the request and of an OK response (flags are one
// byte, 0 or 1; integers are 8-byte two's complement):
//
//	op  name     request items                       OK response items
//	1   hello    (none)                              server's MaxFrameBytes (4 bytes)
//	2   set      key, value                          (none)
//	3   get      key                                 value
//	4   tryget   key                                 found flag, value (empty if not found)
//	5   add      key, delta                          new counter value
//	6   cas      key, old-present flag, old, new     swapped flag, present flag, current value
//	7   wait     zero or more keys                   (none)
//	8   delete   key                                 existed flag
//	9   cancel   (none); its id is that of a pending  (no response of its own)
//	             get or wait, which then ends at once
//
// Statuses. An ok response carries the op's items; a missing response
// carries the keys still missing; every other status carries one item, the
// error message, and maps to the sentinel error shown:
//
//	status  name         error          connection
//	0       ok           -              kept
//	1       missing      -              kept (a get or wait ended first)
//	2       closed       ErrClosed      kept, but the server is shutting down
//	3       bad job key  ErrBadJobKey   closed (handshake only)
//	4       limit        ErrLimit       kept; closed if the frame was too large
//	5       protocol     ErrProtocol    kept; closed if the frame was malformed or its tag wrong
//	6       invalid      ErrInvalid     kept
//	7       not counter  ErrNotCounter  kept
//	8       overflow     ErrOverflow    kept
//
// When a waiting call's context ends, the client sends cancel and returns
// the missing keys the server answers with.
package store
