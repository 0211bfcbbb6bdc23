// Command rssprobe is the program bench/rss.sh starts under gocoll run to
// measure each rank's peak resident memory under two loads on rank 0:
//
//	incast  every other rank sends -count messages of -size bytes to rank
//	        0, which receives them as they come, -window per sender posted
//	        at once: a sustained N-to-1 incast
//	storm   every other rank posts -count sends of -size bytes to rank 0
//	        at once (SendAsync) and rank 0 posts no receive for -hold:
//	        the messages nobody has received yet are the transports' to
//	        hold (within their unexpected-message limits) or to refuse;
//	        then rank 0 receives them all, -window per sender at once
//
// The messages are checked (each one's first 8 bytes carry its sender
// and index). Each rank prints one JSON line: its rank, the mode, the
// transport, the bytes it sent or received, the seconds it took, and its
// peak RSS (Linux's VmHWM; getrusage's ru_maxrss elsewhere) before the
// load and at the end. A
// sender's own buffer is one -size slice reused for every send (the
// transports only read it), so its RSS is the runtime's and the
// transport's, not the payload's.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gocoll/gocoll"
	"github.com/gocoll/gocoll/collective"
)

func main() {
	mode := flag.String("mode", "incast", "incast or storm")
	size := flag.Int("size", 1<<20, "message bytes (at least 8)")
	count := flag.Int("count", 256, "messages per sender")
	window := flag.Int("window", 4, "receives rank 0 posts at once per sender (in a storm, once the hold is over)")
	hold := flag.Duration("hold", 3*time.Second, "storm: how long rank 0 posts no receive")
	traceDir := flag.String("trace", "", "write each rank's Go execution trace to DIR/rank<N>.trace (see go tool trace)")
	flag.Parse()
	err := func() error {
		if err := rusageSupported(); err != nil {
			return err
		}
		if *traceDir != "" {
			stop, err := startTrace(*traceDir)
			if err != nil {
				return err
			}
			defer stop()
		}
		return run(*mode, max(*size, 8), *count, max(*window, 1), *hold)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rssprobe:", err)
		os.Exit(1)
	}
}

type result struct {
	Rank        int     `json:"rank"`
	Size        int     `json:"size"`
	Mode        string  `json:"mode"`
	Transport   string  `json:"transport"`
	MsgBytes    int     `json:"msg_bytes"`
	Bytes       int64   `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	PeakRSSInit float64 `json:"peak_rss_mib_before"`
	PeakRSS     float64 `json:"peak_rss_mib"`
}

func run(mode string, size, count, window int, hold time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w, err := gocoll.Init(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	res := result{Rank: w.Rank(), Size: w.Size(), Mode: mode, Transport: w.Job().Transport, MsgBytes: size}
	if err := w.Barrier(ctx); err != nil {
		return err
	}
	res.PeakRSSInit = peakMiB()
	start := time.Now()
	switch {
	case mode != "incast" && mode != "storm":
		return fmt.Errorf("-mode %q: want incast or storm", mode)
	case w.Rank() == 0:
		res.Bytes, err = receive(ctx, w.Comm, mode, size, count, window, hold)
	default:
		res.Bytes, err = send(ctx, w.Comm, mode, size, count)
	}
	if err != nil {
		return err
	}
	res.Seconds = time.Since(start).Seconds()
	if err := w.Barrier(ctx); err != nil {
		return err
	}
	res.PeakRSS = peakMiB()
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return nil
}

// send sends count messages to rank 0: one after another (incast) or all
// posted at once (storm).
func send(ctx context.Context, c *collective.Comm, mode string, size, count int) (int64, error) {
	buf := make([]byte, size)
	hs := make([]*collective.Handle, 0, count)
	for i := range count {
		// The index goes in each message; the buffer is shared, so in a
		// storm only the last index is there: the receiver checks the
		// sender only.
		binary.LittleEndian.PutUint32(buf[0:], uint32(c.Rank()))
		binary.LittleEndian.PutUint32(buf[4:], uint32(i))
		if mode == "incast" {
			if err := collective.Send(ctx, c, buf, 0); err != nil {
				return 0, err
			}
			continue
		}
		hs = append(hs, collective.SendAsync(ctx, c, buf, 0))
	}
	for _, h := range hs {
		if err := h.Wait(ctx); err != nil {
			return 0, err
		}
	}
	return int64(size) * int64(count), nil
}

// receive takes every sender's count messages.
func receive(ctx context.Context, c *collective.Comm, mode string, size, count, window int, hold time.Duration) (int64, error) {
	senders := c.Size() - 1
	if mode == "storm" {
		t := time.NewTimer(hold)
		select {
		case <-t.C:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	bufs := make([][]byte, senders*window)
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	var total int64
	for i := 0; i < count; i += window {
		n := min(window, count-i)
		hs := make([]*collective.Handle, 0, senders*n)
		for s := 1; s <= senders; s++ {
			for k := range n {
				hs = append(hs, collective.RecvAsync(ctx, c, bufs[(s-1)*window+k], s))
			}
		}
		for _, h := range hs {
			if err := h.Wait(ctx); err != nil {
				return total, err
			}
		}
		for s := 1; s <= senders; s++ {
			for k := range n {
				b := bufs[(s-1)*window+k]
				from, idx := binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint32(b[4:])
				if int(from) != s || mode == "incast" && int(idx) != i+k {
					return total, fmt.Errorf("message %d from rank %d carries sender %d, index %d", i+k, s, from, idx)
				}
				total += int64(size)
			}
		}
	}
	return total, nil
}
