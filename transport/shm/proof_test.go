//go:build linux

package shm

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// TestCopyProvesItsProcess: a rendezvous copy reads the sender's nonce in
// the same system call as the data (readRemote), in place of a liveness
// check after the copy. A copy whose nonce is not the one the sender's
// address promised (as if its pid now named another process) fails with
// the peer error of a process that exited; with the right one the data
// arrives, and no peer the endpoint dialed lacks the nonce's address.
func TestCopyProvesItsProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := NewLocalWorld(ctx, 2, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		t.Cleanup(func() { _ = ep.Close() })
	}
	for r, ep := range eps {
		if p := ep.peers[1-r]; p.nonceAddr == 0 {
			t.Fatalf("rank %d does not know where rank %d's nonce lies", r, 1-r)
		}
	}
	msg := bytes.Repeat([]byte{0x5a}, EagerMax+1) // a rendezvous
	exchange := func(op uint64) (transport.Request, []byte) {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: op}}
		buf := make([]byte, len(msg))
		rr := eps[0].Recv(1, tag, buf)
		sr := eps[1].Send(0, tag, msg)
		if _, err := sr.Wait(ctx); err != nil {
			t.Fatalf("send %d: %v", op, err)
		}
		return rr, buf
	}
	rr, buf := exchange(1)
	if n, err := rr.Wait(ctx); err != nil || n != len(msg) || !bytes.Equal(buf, msg) {
		t.Fatalf("copy with the right nonce: %d bytes, %v; data equal %v", n, err, bytes.Equal(buf, msg))
	}

	eps[0].peers[1].nonce++ // rank 1's pid now names "another process"
	rr, _ = exchange(2)
	_, err = rr.Wait(ctx)
	var pe *transport.PeerError
	if !errors.As(err, &pe) || pe.Rank != 1 || !errors.Is(err, errExited) {
		t.Fatalf("copy from a process without the nonce: %v, want rank 1's PeerError for an exited process", err)
	}
}
