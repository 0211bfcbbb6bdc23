package main

import (
	"errors"
	"sync"
	"time"
)

// errQuit ends a stage when another has failed.
var errQuit = errors.New("another stage failed")

// memAlign is the alignment of a memory phase's pieces (a cache line).
const memAlign = 64

// call runs call c: the phases that run (-only) as stages of a pipeline
// over -pieces pieces, each stage a goroutine that does piece k once the
// stage before has completed it. A memory stage completes a piece when it
// has copied and reduced it; a network stage when it has sent its piece
// and the peer's has come (a second goroutine waits for the peer's pieces
// in order, so sending never waits for a receipt). account gets each
// stage's kind, wall time and the process's CPU-seconds from the previous
// stage's last piece to its own (the phase's own figures with one piece).
func (r *rank) call(c int, account func(kind string, d time.Duration, cpu float64)) error {
	quit := make(chan struct{})
	var once sync.Once
	var first error
	fail := func(err error) {
		once.Do(func() { first = err; close(quit) })
	}
	wait := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-quit:
			return false
		}
	}
	var prev []chan struct{}
	var stages []int
	done := make([][]chan struct{}, len(r.phases))
	for i, p := range r.phases {
		if !r.runs(p.Kind) {
			continue
		}
		done[i] = chans(r.o.pieces)
		stages = append(stages, i)
		if p.Kind == KindMem {
			go r.memStage(i, p, prev, done[i], wait)
		} else {
			sent := chans(r.o.pieces)
			go r.sendStage(c, i, p, prev, sent, wait, fail)
			go r.recvStage(c, i, sent, done[i], wait, fail, quit)
		}
		prev = done[i]
	}
	t, cs := time.Now(), cpuSeconds()
	for _, i := range stages {
		if !wait(done[i][r.o.pieces-1]) {
			<-quit
			return first
		}
		now, cpu := time.Now(), cpuSeconds()
		account(r.phases[i].Kind, now.Sub(t), cpu-cs)
		t, cs = now, cpu
	}
	return nil
}

func chans(n int) []chan struct{} {
	out := make([]chan struct{}, n)
	for i := range out {
		out[i] = make(chan struct{})
	}
	return out
}

// memStage copies and reduces each piece of a memory phase in turn (see
// the package doc for what it stands for).
func (r *rank) memStage(i int, p Phase, in, out []chan struct{}, wait func(chan struct{}) bool) {
	half := r.o.size / RanksPerHost
	for k := range out {
		if in != nil && !wait(in[k]) {
			return
		}
		off, n := Span(p.Bytes, r.o.pieces, memAlign, k)
		if p.Sum { // give the peer its half, reduce ours with the peer's
			copy(r.shm[off:off+n], r.buf[half+off:half+off+n])
			r.sum(r.buf[off:off+n], r.buf[off:off+n], r.peer[off:off+n])
		} else { // give the peer our result, take the peer's
			copy(r.shm[off:off+n], r.buf[off:off+n])
			copy(r.buf[half+off:half+off+n], r.peer[off:off+n])
		}
		close(out[k])
	}
}

// sendStage sends each piece of a network phase to its peer once the
// stage before has completed it.
func (r *rank) sendStage(c, i int, p Phase, in, sent []chan struct{}, wait func(chan struct{}) bool, fail func(error)) {
	half := r.o.size / RanksPerHost
	for k := range sent {
		if in != nil && !wait(in[k]) {
			return
		}
		off, n := Span(p.Bytes, r.o.pieces, payloadLen, k)
		if err := r.out[i].send(c, i, off, r.buf[half+off:half+off+n]); err != nil {
			fail(err)
			return
		}
		close(sent[k])
	}
}

// recvStage completes each piece of a network phase once it is sent and
// the peer's has come.
func (r *rank) recvStage(c, i int, sent, out []chan struct{}, wait func(chan struct{}) bool, fail func(error), quit chan struct{}) {
	for k := range out {
		if !wait(sent[k]) {
			return
		}
		if err := r.in.wait(c, i, k, r.o.timeout, quit); err != nil {
			fail(err)
			return
		}
		close(out[k])
	}
}
