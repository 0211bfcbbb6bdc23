package collective

// The hierarchical pipeline's start (see hierpipe.go for the order of its
// messages and hierpiperun.go's pump for the hold).

// hierStartPieces is how many of the first pieces make the pipeline's
// start class (hstage.class): their reduce-scatters and the first step of
// their top level's ring come before every other message, and this rank's
// other lower-level sends are held until its sends of that first step are
// posted. Posted at once, as their keys allowed, every piece's
// reduce-scatters shared the cores and the links within a site with the
// first piece's: in the two-site lab (2 x 2 x 2 ranks on 2 cores, 16 MiB
// in 4 pieces of 4 MiB, GOCOLL_PROBE=0, load 12-20) a rank's first WAN
// send came a median 69 ms after its call started (its LAN receive of the
// first piece at 63), against 26 (23) with the start (24 calls each, a
// temporary trace; bench/results/start32/README.md). Later pieces'
// reduce-scatters held longer (each piece's until the one before it had
// reached the top level) starved the top level where the lower levels
// are not much faster than it (TestHierarchicalChunksOverlapTheLevels:
// 74.8 % of the WAN bound against 99.1 %).
const hierStartPieces = 1

// top reports whether s is the top level's ring (the one over the shard
// owners of every site).
func (s *hstage) top() bool { return s.kind == allSteps || s.kind == exchangeStep }

// class returns the order class of message i, 0 (the start) or 1: 0 for
// the reduce-scatters of the first hierStartPieces pieces and the first
// step of their top level's ring. Messages sort by (class, key, piece,
// index): the class depends on the piece, the ring and the step only, so
// both ends of a message compute the same one. Within each class the
// order is the keys' as before, so on the lab's grid (a ring of two a
// level) every pair's order is unchanged (piece 0's first messages had
// the lowest keys on their pairs): the start moves ahead only in each
// rank's wait order and holds the other pieces' sends.
func (s *hstage) class(i int) int {
	if s.piece < hierStartPieces && (s.kind == reduceScatterSteps || s.top() && i < s.g.k) {
		return 0
	}
	return 1
}

// held reports whether send i waits for the start (hierPipe.startLeft):
// a lower level's send of class 1.
func (s *hstage) held(i int) bool { return !s.top() && s.class(i) == 1 }

// opens reports whether send i is one of the start's top level sends,
// which hold the others (held) until all are posted.
func (s *hstage) opens(i int) bool { return s.top() && s.class(i) == 0 }
