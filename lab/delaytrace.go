//go:build linux

package lab

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"time"
)

// delaydTraceEnv names a file (suffixed with the daemon's pid) the delay daemon writes a per-packet trace
// to when it receives SIGUSR1 (a diagnostic: where the bursts that a rate
// limiter drops come from). Each line: queue, IP length, source port, arrival, due and
// release times in nanoseconds since the daemon started.
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

type delaydTrace struct {
	path  string
	start time.Time
	mu    sync.Mutex
	recs  []traceRec
}

func newDelaydTrace() *delaydTrace {
	p := os.Getenv(delaydTraceEnv)
	if p == "" {
		return nil
	}
	return &delaydTrace{path: fmt.Sprintf("%s.%d", p, os.Getpid()), start: time.Now()}
}

func (t *delaydTrace) add(p heldPacket, now time.Time) {
	t.mu.Lock()
	if len(t.recs) < delaydTraceMax {
		t.recs = append(t.recs, traceRec{p.queue, p.hdr, p.arrive.Sub(t.start), p.due.Sub(t.start), now.Sub(t.start)})
	}
	t.mu.Unlock()
}

func (t *delaydTrace) write() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := os.Create(t.path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# start %d (Unix ns); queue length sport arrive due released (ns since start)\n", t.start.UnixNano())
	for _, r := range t.recs {
		fmt.Fprintf(w, "%d %d %d %d %d %d\n", r.queue, r.hdr.length, r.hdr.sport, r.arrive, r.due, r.released)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
