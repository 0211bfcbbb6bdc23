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
// answer: a dissemination up to smallBytes (collective's
// Config.SmallBytes), with no confirming round after it; above, direct
// from the root to every rank where the ranks share memory (shared:
// transport.Traits; every receiver copies once, straight from the root's
// buffer, all at once), else a pipelined chain.
//
// Direct above the 4064 bytes that ride in a header was tried on shared
// memory (one hop for every receiver, where the dissemination's fourth
// rank waits for a forwarder's copy): the same copies and system calls
// per call, 3 more small messages (the confirming round), and, at 4 ranks
// on 2 cores under load 21-24, 1.13-1.37x the dissemination's time per
// call at 8 and 64 KiB (medians of 8-10 interleaved pairs). Not kept.
func LocalBroadcast(bytes, smallBytes int, shared bool) LocalAlgo {
	switch {
	case bytes <= smallBytes:
		return LocalDissemination
	case shared:
		return LocalDirect
	}
	return LocalChain
}
