//go:build linux

package lab

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// delaydTraceEnv names a file (suffixed with the daemon's pid) the delay daemon writes a per-packet trace
// to when it receives SIGUSR1 (a diagnostic: where the bursts that a rate
// limiter drops come from). Each line: queue, IP length, source port, arrival, due and
// release times in nanoseconds since the daemon started. The arrival is
// the kernel's receive stamp where NFQUEUE passes one (see arrival).
const delaydTraceEnv = "GOCOLL_DELAYD_TRACE"

// delaydTraceMax bounds the packets a trace keeps (the first ones).
const delaydTraceMax = 1 << 21

type traceRec struct {
	queue                 uint16
	hdr                   traceHdr
	arrive, due, released time.Duration
}

// traceHdr is what a trace keeps of a packet's headers: the IPv4 total
// length and the UDP or TCP source port.
type traceHdr struct{ length, sport uint16 }

// traceHeader reads a traceHdr from a packet's first bytes (zero if they
// are not IPv4 of at least traceCopyRange bytes).
func traceHeader(b []byte) traceHdr {
	if len(b) < traceCopyRange || b[0]>>4 != 4 {
		return traceHdr{}
	}
	ihl := int(b[0]&0xf) * 4
	h := traceHdr{length: binary.BigEndian.Uint16(b[2:])}
	if len(b) >= ihl+2 {
		h.sport = binary.BigEndian.Uint16(b[ihl:])
	}
	return h
}

// delaydTrace keeps the trace. Its records are preallocated (at most
// delaydTraceMax, 64 MiB) so that add, run by the daemon's real-time loop,
// never copies them to grow; add only tries t.mu and counts the record as
// skipped when write holds it, so that the loop never parks while a trace
// is written.
type delaydTrace struct {
	path    string
	start   time.Time
	mu      sync.Mutex // guards recs' length; its elements below that are never written again
	recs    []traceRec
	full    atomic.Int64 // records not kept: the trace was at its cap
	skipped atomic.Int64 // records not kept: write held mu
}

func newDelaydTrace() *delaydTrace {
	p := os.Getenv(delaydTraceEnv)
	if p == "" {
		return nil
	}
	return newTraceAt(fmt.Sprintf("%s.%d", p, os.Getpid()), delaydTraceMax)
}

// newTraceAt returns a trace written to path that keeps at most max records.
func newTraceAt(path string, max int) *delaydTrace {
	return &delaydTrace{path: path, start: time.Now(), recs: make([]traceRec, 0, max)}
}

// add records p, released at now, unless the trace is full or being
// written (then it only counts it). It never waits.
func (t *delaydTrace) add(p heldPacket, now time.Time) {
	if !t.mu.TryLock() {
		t.skipped.Add(1)
		return
	}
	if len(t.recs) < cap(t.recs) {
		t.recs = append(t.recs, traceRec{p.queue, p.hdr, p.arrive.Sub(t.start), p.due.Sub(t.start), now.Sub(t.start)})
	} else {
		t.full.Add(1)
	}
	t.mu.Unlock()
}

// write writes the records kept so far to t.path, holding t.mu only to
// take their number (add appends in place, beyond it), and notes the
// records not kept.
func (t *delaydTrace) write() error {
	t.mu.Lock()
	recs := t.recs
	t.mu.Unlock()
	f, err := os.Create(t.path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# start %d (Unix ns); queue length sport arrive due released (ns since start)\n", t.start.UnixNano())
	if n := t.full.Load(); n > 0 {
		fmt.Fprintf(w, "# cap of %d records reached: %d later packets not recorded\n", cap(recs), n)
	}
	if n := t.skipped.Load(); n > 0 {
		fmt.Fprintf(w, "# %d packets not recorded while a trace was being written\n", n)
	}
	for _, r := range recs {
		fmt.Fprintf(w, "%d %d %d %d %d %d\n", r.queue, r.hdr.length, r.hdr.sport, r.arrive, r.due, r.released)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
