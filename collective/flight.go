package collective

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FlightRecords is how many operations a rank's flight record
// (Comm.FlightRecord) holds: the most recent ones, running or ended, of
// every communicator sharing the world communicator's recorder (those made
// from it by Split). Older records leave it, running or not; the recorder
// keeps those of running operations aside, for stall reports, until they
// end (at most the operations running: MaxRunningOps per communicator).
const FlightRecords = 128

// OpState is where an operation is.
type OpState uint8

// Operation states.
const (
	OpRunning OpState = iota + 1
	OpDone
	OpFailed
)

var opStateNames = [...]string{"?", "running", "done", "failed"}

func (s OpState) String() string {
	if int(s) < len(opStateNames) {
		return opStateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// OpRecord is one operation as this rank's flight recorder saw it.
type OpRecord struct {
	Comm       uint64    // the communicator's id
	Rank, Size int       // this rank in the communicator, and its size
	Seq        uint64    // the operation's number there (point-to-point: per pair and direction)
	Kind       Kind      // the collective
	Algo       Algorithm // its algorithm
	Bytes      int       // this rank's message size (count times element size)
	Root       int       // the root, or -1
	State      OpState
	Start, End time.Time // End is zero while running
	// WaitingOn is the communicator rank the operation waits on at its
	// last blocking wait, or -1. Waited is how long that wait has lasted
	// at the last look (every 100 ms at most while it blocks).
	WaitingOn int
	Waited    time.Duration
	// Peers are the ranks the operation exchanges headers with; Missing,
	// those of them whose header had not arrived at the last look: they
	// had not started this operation (or not reached the step that talks
	// to this rank).
	Peers, Missing []int
	Err            string // the error an operation that failed ended with
}

// String prints the record on one line, a running operation's age as of
// now.
func (r OpRecord) String() string { return r.format(time.Now()) }

// format prints the record, a running operation's age as of now.
func (r OpRecord) format(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s #%d (comm %#x, rank %d of %d, %s, %d bytes", r.Kind, r.Seq, r.Comm, r.Rank, r.Size, r.Algo, r.Bytes)
	if r.Root >= 0 {
		fmt.Fprintf(&b, ", root %d", r.Root)
	}
	fmt.Fprintf(&b, ") %s", r.State)
	switch r.State {
	case OpRunning:
		fmt.Fprintf(&b, " for %v", now.Sub(r.Start).Round(time.Millisecond))
		if r.WaitingOn >= 0 {
			fmt.Fprintf(&b, ", waiting on rank %d", r.WaitingOn)
		}
		if len(r.Missing) > 0 {
			fmt.Fprintf(&b, ", no header yet from %s", rankList(r.Missing))
		}
	default:
		fmt.Fprintf(&b, " in %v", r.End.Sub(r.Start).Round(time.Microsecond))
		if r.Err != "" {
			fmt.Fprintf(&b, ": %s", r.Err)
		}
	}
	return b.String()
}

// maxRanksListed bounds the ranks rankList names.
const maxRanksListed = 16

// rankList prints ranks as "rank 2" or "ranks 1, 3", the first
// maxRanksListed (16) of them and then "and K more", so that a report or
// an error about a large communicator stays short.
func rankList(ranks []int) string {
	shown := ranks[:min(len(ranks), maxRanksListed)]
	s := make([]string, len(shown))
	for i, r := range shown {
		s[i] = fmt.Sprint(r)
	}
	if len(ranks) == 1 {
		return "rank " + s[0]
	}
	out := "ranks " + strings.Join(s, ", ")
	if more := len(ranks) - len(shown); more > 0 {
		out += fmt.Sprintf(" and %d more", more)
	}
	return out
}

// flightRecorder is a rank's ring of its most recent operations. Each
// operation writes its record at start, at every look while it blocks, and
// at its end, under mu. The record of an operation still running when a
// newer one takes its slot moves to evicted, where the operation goes on
// writing it until it ends (id tells them apart), so that every running
// operation has its record: the ring is for the flight record, the two
// together for stall reports.
type flightRecorder struct {
	mu      sync.Mutex
	ring    [FlightRecords]OpRecord
	next    uint64              // operations recorded so far; the next one's id
	started atomic.Uint64       // next, for a lean call's stamp to look at without mu (leanNote)
	evicted map[uint64]OpRecord // running operations' records the ring dropped, by id

	verdicts [maxVerdicts]verdict // see Comm.SetHangVerdict; the newest replaces the oldest
	nextV    int

	onEnd atomic.Pointer[func(OpRecord)] // see Comm.OnOpEnd

	// lean: the latest lean call of each communicator sharing the
	// recorder that made one (boardlean.go), until its Close.
	lean []*leanRecord
}

// maxVerdicts bounds the hang verdicts a recorder keeps.
const maxVerdicts = 8

// verdict is the job's diagnosis of one stuck operation.
type verdict struct {
	comm, seq uint64
	text      string
}

// start records a new running operation and returns its id.
func (f *flightRecorder) start(rec OpRecord) uint64 {
	f.mu.Lock()
	id := f.startLocked(rec)
	f.mu.Unlock()
	return id
}

// startLocked is start with f.mu held.
func (f *flightRecorder) startLocked(rec OpRecord) uint64 {
	id := f.next
	f.next++
	f.started.Store(f.next)
	slot := &f.ring[id%FlightRecords]
	if id >= FlightRecords && slot.State == OpRunning { // operation id-FlightRecords runs on
		if f.evicted == nil {
			f.evicted = make(map[uint64]OpRecord)
		}
		f.evicted[id-FlightRecords] = *slot
	}
	*slot = rec
	return id
}

// update applies fn to operation id's record, in the ring or, if the ring
// dropped it while it ran, aside; a record fn leaves ended goes from
// there.
func (f *flightRecorder) update(id uint64, fn func(*OpRecord)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next-id <= FlightRecords {
		fn(&f.ring[id%FlightRecords])
		return
	}
	r, ok := f.evicted[id]
	if !ok {
		return
	}
	fn(&r)
	if r.State == OpRunning {
		f.evicted[id] = r
	} else {
		delete(f.evicted, id)
	}
}

// stalled returns, at one instant, operation id's record (see
// recordLocked) and those of every operation running, oldest first.
func (f *flightRecorder) stalled(id uint64) (OpRecord, []OpRecord, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	op, ok := f.recordLocked(id)
	return op, f.runningLocked(), ok
}

// runningLocked returns a copy of the records of every operation
// running, oldest first; f.mu is held.
func (f *flightRecorder) runningLocked() []OpRecord {
	ids := make([]uint64, 0, len(f.evicted))
	for id := range f.evicted {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]OpRecord, 0, len(ids)+int(min(f.next, FlightRecords)))
	for _, id := range ids {
		out = append(out, f.evicted[id])
	}
	for id := f.next - min(f.next, FlightRecords); id < f.next; id++ {
		if r := f.ring[id%FlightRecords]; r.State == OpRunning {
			out = append(out, r)
		}
	}
	for i := range out {
		out[i].Peers, out[i].Missing = slices.Clone(out[i].Peers), slices.Clone(out[i].Missing)
	}
	return out
}

// snapshot returns a copy of the records, oldest first.
func (f *flightRecorder) snapshot() []OpRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := min(f.next, FlightRecords)
	out := make([]OpRecord, 0, n)
	for id := f.next - n; id < f.next; id++ {
		r := f.ring[id%FlightRecords]
		r.Peers, r.Missing = slices.Clone(r.Peers), slices.Clone(r.Missing)
		out = append(out, r)
	}
	for _, l := range f.lean { // each in start order among the others
		if r, ok := l.read(); ok {
			i := len(out)
			for i > 0 && out[i-1].Start.After(r.Start) {
				i--
			}
			out = slices.Insert(out, i, r)
		}
	}
	if len(out) > FlightRecords { // the most recent ones
		out = out[len(out)-FlightRecords:]
	}
	return out
}

// FlightRecord returns this rank's flight record: its most recent
// operations (at most FlightRecords) on this communicator and on every
// communicator sharing its recorder, oldest first.
func (c *Comm) FlightRecord() []OpRecord { return c.flight.snapshot() }

// Pending returns the operations of the flight record still running.
func Pending(records []OpRecord) []OpRecord {
	var out []OpRecord
	for _, r := range records {
		if r.State == OpRunning {
			out = append(out, r)
		}
	}
	return out
}

// recordLocked returns a copy of operation id's record: from the ring,
// or aside while it runs; false if neither holds it (it ended and left
// the ring). f.mu is held.
func (f *flightRecorder) recordLocked(id uint64) (OpRecord, bool) {
	r, ok := f.evicted[id]
	if f.next-id <= FlightRecords {
		r, ok = f.ring[id%FlightRecords], true
	}
	r.Peers, r.Missing = slices.Clone(r.Peers), slices.Clone(r.Missing)
	return r, ok
}

// clockEpoch is the process's reference instant for opNow.
var clockEpoch = time.Now()

// opNow is the time an operation's start and end are stamped with: the
// monotonic clock's reading as an offset from clockEpoch, which is one
// clock read where time.Now takes two (the wall clock and the monotonic
// one). Its result carries a monotonic reading, so deadlines made from it
// and every comparison or difference with time.Now's are exact; its wall
// clock is clockEpoch's plus the monotonic time since, so it does not
// follow a step or slew of the system's wall clock after the process
// started: a flight record's Start and End, shown as durations in this
// process, are exact; in another process (the launcher's diagnosis reads
// records as JSON, without monotonic readings) a running operation's age
// is off by the wall clock's adjustment since this process started.
func opNow() time.Time { return clockEpoch.Add(time.Since(clockEpoch)) }

// record starts the operation's flight record.
func (o *operation) record() {
	h := o.hdr
	o.flightID = o.c.flight.start(OpRecord{
		Comm: o.c.id, Rank: o.c.rank, Size: o.c.Size(), Seq: o.key.Op,
		Kind: h.kind, Algo: h.algo, Bytes: int(h.count) * max(1, h.dt.Size()), Root: int(h.root),
		State: OpRunning, Start: o.start, WaitingOn: -1,
	})
}

// look writes, while the operation blocks on peer (-1: unknown) since
// since, whom it waits on and which touched peers' headers have not come.
func (o *operation) look(peer int, since time.Time) {
	var peers, missing []int
	for i := range o.peers {
		p := &o.peers[i]
		if !p.touched {
			continue
		}
		peers = append(peers, i)
		if !p.checked && p.hdrReq != nil {
			select {
			case <-p.hdrReq.Done():
			default:
				missing = append(missing, i)
			}
		}
	}
	waited := time.Since(since)
	o.c.flight.update(o.flightID, func(r *OpRecord) {
		r.WaitingOn, r.Waited, r.Peers, r.Missing = peer, waited, peers, missing
	})
}

// recordEnd ends the operation's flight record with err, and passes the
// record to the OnOpEnd function if there is one.
func (o *operation) recordEnd(err error) {
	now := opNow()
	f := o.c.flight.onEnd.Load()
	if ended, ok := o.c.flight.end(o.flightID, now, err, f != nil); ok && f != nil {
		(*f)(ended)
	}
}

// end is update(id, ...) for an operation's end (recordEnd), without a
// function value: the record gets now, its state by err, no wait; it
// returns a copy of it (without Peers) if keep, and whether the record
// was still there.
func (f *flightRecorder) end(id uint64, now time.Time, err error, keep bool) (OpRecord, bool) {
	f.mu.Lock()
	var aside OpRecord
	r := &aside
	if f.next-id <= FlightRecords {
		r = &f.ring[id%FlightRecords]
	} else if a, ok := f.evicted[id]; ok {
		aside = a
		delete(f.evicted, id) // it ends: no longer kept aside
	} else {
		f.mu.Unlock()
		return OpRecord{}, false
	}
	r.End, r.State, r.WaitingOn, r.Missing = now, OpDone, -1, nil
	if err != nil {
		r.State, r.Err = OpFailed, err.Error()
	}
	var ended OpRecord
	if keep {
		ended = *r
		ended.Peers = nil
	}
	f.mu.Unlock()
	return ended, true
}

// OnOpEnd has f receive each operation's flight record as the operation
// ends (done or failed), on this communicator and on every communicator
// sharing its recorder (Split's); nil stops it. f runs on the goroutine
// that ran the operation, before the operation's call returns: it must
// be quick and must not call the communicator.
func (c *Comm) OnOpEnd(f func(OpRecord)) {
	if f == nil {
		c.flight.onEnd.Store(nil)
		return
	}
	c.flight.onEnd.Store(&f)
}
