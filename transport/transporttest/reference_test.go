package transporttest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocoll/gocoll/transport"
)

// refWorld is a minimal in-memory transport used to check the suite itself:
// sends copy the message and complete at once. Its mutation knob breaks one
// promise on purpose, to show that the suite notices.
type refWorld struct {
	mu       sync.Mutex
	size     int
	mutation string
	queues   map[refKey][][]byte  // unmatched messages
	posted   map[refKey][]*refReq // unmatched receives
	aborted  map[refAbortKey]string
	closed   []bool
}

type refKey struct {
	src, dst int
	tag      transport.Tag
}

type refAbortKey struct {
	rank int
	op   transport.OpKey
}

type refEndpoint struct {
	w    *refWorld
	rank int
}

type refReq struct {
	done chan struct{}
	buf  []byte
	key  refKey
	n    int
	err  error
	w    *refWorld
}

func newRefWorld(size int, mutation string) []transport.Endpoint {
	w := &refWorld{size: size, mutation: mutation, queues: map[refKey][][]byte{},
		posted: map[refKey][]*refReq{}, aborted: map[refAbortKey]string{}, closed: make([]bool, size)}
	eps := make([]transport.Endpoint, size)
	for i := range eps {
		eps[i] = &refEndpoint{w: w, rank: i}
	}
	return eps
}

func (e *refEndpoint) Rank() int { return e.rank }
func (e *refEndpoint) Size() int { return e.w.size }

func (e *refEndpoint) check(peer int) error {
	if e.w.closed[e.rank] {
		return transport.ErrClosed
	}
	if peer < 0 || peer >= e.w.size {
		return transport.ErrBadRank
	}
	return nil
}

func (e *refEndpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	w := e.w
	w.mu.Lock()
	defer w.mu.Unlock()
	r := &refReq{done: make(chan struct{}), w: w}
	if err := e.check(peer); err != nil {
		r.finish(0, err)
		return r
	}
	key := refKey{e.rank, peer, tag}
	if _, ok := w.aborted[refAbortKey{peer, tag.OpKey}]; ok || w.closed[peer] {
		r.finish(len(buf), nil) // dropped
		return r
	}
	if recvs := w.posted[key]; len(recvs) > 0 {
		w.posted[key] = recvs[1:]
		recvs[0].deliver(buf)
	} else {
		w.queues[key] = append(w.queues[key], append([]byte{}, buf...))
	}
	r.finish(len(buf), nil)
	return r
}

func (e *refEndpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	w := e.w
	w.mu.Lock()
	defer w.mu.Unlock()
	r := &refReq{done: make(chan struct{}), buf: buf, w: w, key: refKey{peer, e.rank, tag}}
	if err := e.check(peer); err != nil {
		r.finish(0, err)
		return r
	}
	if reason, ok := w.aborted[refAbortKey{peer, tag.OpKey}]; ok && peer != e.rank {
		r.finish(0, w.remoteAbort(peer, tag.OpKey, reason))
		return r
	}
	if msgs := w.queues[r.key]; len(msgs) > 0 {
		i := 0
		if w.mutation == "lifo" {
			i = len(msgs) - 1
		}
		msg := msgs[i]
		w.queues[r.key] = append(msgs[:i:i], msgs[i+1:]...)
		r.deliver(msg)
		return r
	}
	w.posted[r.key] = append(w.posted[r.key], r)
	return r
}

func (w *refWorld) remoteAbort(rank int, op transport.OpKey, reason string) error {
	if w.mutation == "plainabort" {
		return errors.New(reason)
	}
	return &transport.RemoteAbortError{Rank: rank, Op: op, Reason: reason}
}

func (e *refEndpoint) Abort(op transport.OpKey, peers []int, reason error) {
	w := e.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.aborted[refAbortKey{e.rank, op}] = reason.Error()
	for key, recvs := range w.posted {
		if key.tag.OpKey != op {
			continue
		}
		for _, r := range recvs {
			switch {
			case key.dst == e.rank:
				r.finish(0, fmt.Errorf("aborted: %w", reason))
			case key.src == e.rank:
				r.finish(0, w.remoteAbort(e.rank, op, reason.Error()))
			default:
				continue
			}
			w.unpost(r)
		}
	}
	for key := range w.queues {
		if key.tag.OpKey == op && key.dst == e.rank {
			delete(w.queues, key)
		}
	}
}

func (w *refWorld) unpost(r *refReq) {
	recvs := w.posted[r.key]
	for i, p := range recvs {
		if p == r {
			w.posted[r.key] = append(recvs[:i:i], recvs[i+1:]...)
			return
		}
	}
}

func (e *refEndpoint) Close() error {
	w := e.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed[e.rank] = true
	for key, recvs := range w.posted {
		if key.dst == e.rank {
			for _, r := range recvs {
				r.finish(0, transport.ErrClosed)
			}
			delete(w.posted, key)
		}
	}
	return nil
}

// deliver copies msg into r's buffer and completes r; w.mu is held.
func (r *refReq) deliver(msg []byte) {
	if len(msg) > len(r.buf) {
		if r.w.mutation == "notrunc" {
			r.finish(copy(r.buf, msg), nil)
			return
		}
		r.finish(0, fmt.Errorf("%d > %d: %w", len(msg), len(r.buf), transport.ErrTruncated))
		return
	}
	r.finish(copy(r.buf, msg), nil)
}

func (r *refReq) finish(n int, err error) {
	select {
	case <-r.done:
		return
	default:
	}
	r.n, r.err = n, err
	close(r.done)
}

func (r *refReq) Wait(ctx context.Context) (int, error) {
	select {
	case <-r.done:
		r.w.mu.Lock()
		defer r.w.mu.Unlock()
		return r.n, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (r *refReq) Done() <-chan struct{} { return r.done }

func (r *refReq) Cancel() {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	select {
	case <-r.done:
		return
	default:
	}
	r.w.unpost(r)
	r.finish(0, transport.ErrCancelled)
}
