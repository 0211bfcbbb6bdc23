package transporttest

import (
	"context"
	"fmt"
	"sync"

	"github.com/gocoll/gocoll/transport"
)

// refWorld is a minimal in-memory transport used to check the suite itself.
// A send of at most refEagerLimit bytes copies the message and completes at
// once; a larger one stays pending until a receive matches it, as a
// rendezvous would. Its mutation knob breaks one promise on purpose, to
// show that the suite notices. Test-only: its state is not bounded.
type refWorld struct {
	mu       sync.Mutex
	size     int
	mutation string
	queues   map[refKey][]*refMsg // unmatched messages, in send order
	posted   map[refKey][]*refReq // unmatched receives
	ended    map[refEndKey]refEnd // operations ended on a rank
	closed   []bool
}

// refEagerLimit is the largest send the reference completes before it is
// matched.
const refEagerLimit = 64 << 10

type refKey struct {
	src, dst int
	tag      transport.Tag
}

// refMsg is an unmatched message: a copy of a small one, or a pending send.
type refMsg struct {
	data []byte
	send *refReq
}

type refEndpoint struct {
	w    *refWorld
	rank int
}

type refReq struct {
	done   chan struct{}
	isSend bool
	buf    []byte
	key    refKey
	n      int
	err    error
	w      *refWorld
}

func newRefWorld(size int, mutation string) []transport.Endpoint {
	w := &refWorld{size: size, mutation: mutation, queues: map[refKey][]*refMsg{},
		posted: map[refKey][]*refReq{}, ended: map[refEndKey]refEnd{}, closed: make([]bool, size)}
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
	r := &refReq{done: make(chan struct{}), w: w, isSend: true, buf: buf, key: refKey{e.rank, peer, tag}}
	if err := e.check(peer); err != nil {
		r.finish(0, err)
		return r
	}
	if err := w.endedErr(e.rank, peer, tag.OpKey, true); err != nil {
		r.finish(0, err)
		return r
	}
	if w.closed[peer] || w.endedErr(peer, e.rank, tag.OpKey, false) != nil {
		r.finish(len(buf), nil) // dropped
		return r
	}
	if recvs := w.posted[r.key]; len(recvs) > 0 {
		w.posted[r.key] = recvs[1:]
		recvs[0].deliver(buf)
		r.finish(len(buf), nil)
		return r
	}
	if len(buf) > refEagerLimit {
		w.queues[r.key] = append(w.queues[r.key], &refMsg{send: r})
		return r
	}
	w.queues[r.key] = append(w.queues[r.key], &refMsg{data: append([]byte{}, buf...)})
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
	if err := w.endedErr(e.rank, peer, tag.OpKey, false); err != nil {
		r.finish(0, err)
		return r
	}
	if msgs := w.queues[r.key]; len(msgs) > 0 {
		i := 0
		if w.mutation == "lifo" {
			i = len(msgs) - 1
		}
		msg := msgs[i]
		w.queues[r.key] = append(msgs[:i:i], msgs[i+1:]...)
		if msg.send == nil {
			r.deliver(msg.data)
			return r
		}
		r.deliver(msg.send.buf)
		msg.send.finish(len(msg.send.buf), nil)
		return r
	}
	w.posted[r.key] = append(w.posted[r.key], r)
	return r
}

// unpost removes r from the posted receives or the queued sends; w.mu is
// held.
func (w *refWorld) unpost(r *refReq) {
	if !r.isSend {
		w.posted[r.key] = removeRef(w.posted[r.key], r)
		return
	}
	msgs := w.queues[r.key]
	for i, m := range msgs {
		if m.send == r {
			w.queues[r.key] = append(msgs[:i:i], msgs[i+1:]...)
			return
		}
	}
}

func removeRef(list []*refReq, r *refReq) []*refReq {
	for i, p := range list {
		if p == r {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
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
	for key, msgs := range w.queues {
		switch {
		case key.dst == e.rank:
			for _, m := range msgs {
				if m.send != nil {
					m.send.finish(0, &transport.PeerError{Rank: e.rank, Err: transport.ErrClosed})
				}
			}
			delete(w.queues, key)
		case key.src == e.rank: // copies already sent stay receivable
			w.failPendingSends(key, transport.ErrClosed)
			if w.mutation == "dropsent" {
				delete(w.queues, key)
			}
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
