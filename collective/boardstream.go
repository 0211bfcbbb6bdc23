package collective

import "time"

// boardStreamBlock is the AllToAll block above which a rank chooses, by
// timing its calls (streamPick), how it writes its blocks into its slot:
// plainly, or with non-temporal stores past its caches (streamCopy).
// Below it, it copies them plainly.
//
// Which is faster depends on where the host placed the two vCPUs of this
// project's VMs, which changes every few tens of seconds (session 30,
// bench/results/shm30): when they share a cache, 64 KiB written on one
// is read on the other in about 4 us; when they do not, in about 15, and
// a slot rewritten every call has its lines taken back from the readers'
// caches first. Streamed, the hand-over takes 7-9 us in both placements.
// AllToAll of 256 KiB at 4 ranks (64 KiB blocks), 2000 calls, interleaved
// with a placement probe, load 21-26 (bench/results/shm31): far apart,
// plain 90-94 us, streamed 57-67, pairwise 72-83; close, plain 37,
// streamed 65-66, pairwise 66-69. At 32 KiB blocks (128 KiB) plain wins
// close (24-25 us against streamed's 36-37) and loses far (47-50 against
// 32-36), by less.
const boardStreamBlock = 32 << 10

// Trials of streamPick: every streamPeriod calls of big blocks, it runs
// streamTrial calls streamed and then streamTrial plainly, times each
// but the first of a trial (the change's own cost), and keeps for the
// rest of the period the way whose fastest timed call was shorter (the
// median of 6 picked the slower way on some ranks when the vCPUs were
// far apart, bench/results/shm31). Every rank
// counts the same calls (every rank runs every call of its communicator,
// of the same size), so the ranks try each way together; each decides by
// its own clock, and ranks that decide differently are still correct:
// the way a rank writes is its own.
const (
	streamPeriod = 512
	streamTrial  = 8
)

// streamPick chooses how a rank writes big AllToAll blocks into its slot
// (boardStreamBlock). It is touched only by the board call holding the
// turn (boardState), so it needs no lock.
type streamPick struct {
	calls  uint64 // big-block calls so far
	stream bool   // the way kept for the rest of the period
	now    bool   // this call's way (begin)
	timed  bool   // this call is timed (begin)
	spans  [2][streamTrial - 1]time.Duration
	n      [2]int
}

// begin starts an AllToAll call of blocks of b bytes: it sets the way
// copier returns, and returns the time to pass to end (zero: untimed).
func (p *streamPick) begin(b int) time.Time {
	p.timed, p.now = false, false
	if b <= boardStreamBlock {
		return time.Time{}
	}
	i := p.calls % streamPeriod
	p.calls++
	switch {
	case i < 2*streamTrial:
		p.now = i < streamTrial
		if i == 0 {
			p.n[0], p.n[1] = 0, 0
		}
		if i%streamTrial == 0 {
			return time.Time{} // the first of a trial pays for the change
		}
		p.timed = true
		return time.Now()
	case i == 2*streamTrial:
		p.stream = fastest(p.spans[1][:p.n[1]]) < fastest(p.spans[0][:p.n[0]])
	}
	p.now = p.stream
	return time.Time{}
}

// end records the call begin started at t.
func (p *streamPick) end(t time.Time) {
	if !p.timed {
		return
	}
	w := 0
	if p.now {
		w = 1
	}
	if p.n[w] < len(p.spans[w]) {
		p.spans[w][p.n[w]] = time.Since(t)
		p.n[w]++
	}
}

// copier is the copy this call writes its blocks with (begin's way).
func (p *streamPick) copier() func(dst, src []byte) {
	if p.now {
		return streamCopy
	}
	return copyPlain
}

// fastest is the shortest of d, or the largest duration if d is empty:
// a call's time on a rank that shares a core with others counts the
// turns it waited, the shortest only what its way costs.
func fastest(d []time.Duration) time.Duration {
	m := time.Duration(1<<63 - 1)
	for _, x := range d {
		m = min(m, x)
	}
	return m
}

// copyPlain is Go's copy, as a function value beside streamCopy.
func copyPlain(dst, src []byte) { copy(dst, src) }
