package tune

// LocalAlgo is an algorithm of the rules a communicator follows where the
// cost model has no answer (no topology, or all ranks on one host).
type LocalAlgo uint8

// The rules' Broadcast algorithms (collective's AlgoDissemination,
// AlgoDirect and AlgoChain).
const (
	LocalDissemination LocalAlgo = iota
	LocalDirect
	LocalChain
)

// LocalBroadcast is the Broadcast of bytes where the cost model has no
// answer. inline is what rides in an operation header's message (there
// the dissemination's messages cost what empty ones do, and it needs no
// confirming round); smallBytes is collective's Config.SmallBytes; shared
// says the ranks share memory (transport.Traits).
//
// Over shared memory a buffer that does not ride in the headers goes
// direct: every receiver copies it once straight from the root's buffer
// (or from the one copy an eager root keeps), all at once, a single hop,
// where a dissemination's ranks beyond the root's first two get it a hop
// later from a forwarder, which copies it too and, eager, waits for their
// copy before it may return. Elsewhere a dissemination up to smallBytes,
// then a pipelined chain.
func LocalBroadcast(bytes, inline, smallBytes int, shared bool) LocalAlgo {
	switch {
	case shared && bytes <= min(inline, smallBytes):
		return LocalDissemination
	case shared:
		return LocalDirect
	case bytes <= smallBytes:
		return LocalDissemination
	}
	return LocalChain
}
