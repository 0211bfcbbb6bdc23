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

// copiedWorld is two connected endpoints in this process and a context
// that bounds the test.
func copiedWorld(t *testing.T) ([]*Endpoint, context.Context) { return worldOf2(t, Config{}) }

// worldOf2 is two endpoints with cfg connected in this process and a
// context that bounds the test.
func worldOf2(t *testing.T, cfg Config) ([]*Endpoint, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	eps, err := NewLocalWorld(ctx, 2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		t.Cleanup(func() { _ = ep.Close() })
	}
	return eps, ctx
}

// TestRendezvousSendsNoSlotBack: a receiver tells a rendezvous sender its
// copy ended in the send's word (peer.copied), not with a message: the
// ring from the receiver to the sender takes no slot for it, and the send
// completes with its length.
func TestRendezvousSendsNoSlotBack(t *testing.T) {
	eps, ctx := copiedWorld(t)
	back := eps[0].seg.ring(1) // rank 1's slots to rank 0
	before := back.tail.Load()
	msg := bytes.Repeat([]byte{0x3c}, 64<<10)
	for op := uint64(1); op <= 3; op++ {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: op}}
		buf := make([]byte, len(msg))
		rr := eps[1].Recv(0, tag, buf)
		if n, err := eps[0].Send(1, tag, msg).Wait(ctx); err != nil || n != len(msg) {
			t.Fatalf("send %d: %d bytes, %v", op, n, err)
		}
		if n, err := rr.Wait(ctx); err != nil || n != len(msg) || !bytes.Equal(buf, msg) {
			t.Fatalf("receive %d: %d bytes, %v; data equal %v", op, n, err, bytes.Equal(buf, msg))
		}
	}
	if got := back.tail.Load() - before; got != 0 {
		t.Fatalf("the receiver wrote %d slots back for 3 rendezvous sends, want 0", got)
	}
	if got := eps[0].seg.copiedCount().Load(); got != 3 {
		t.Fatalf("rank 0's segment counts %d copied sends, want 3", got)
	}
}

// holdPolls keeps ep's progress goroutine and spinning waits from polling
// (so from completing copied sends) until the returned function is called.
func holdPolls(ep *Endpoint) (release func()) {
	ep.pollMu.Lock()
	return ep.pollMu.Unlock
}

// copiedUnseen posts a rendezvous send from eps[0] to eps[1] while rank
// 0 cannot poll, and waits until rank 1 has copied it: the send's word says
// copied and the send has not completed.
func copiedUnseen(t *testing.T, eps []*Endpoint, ctx context.Context, op uint64) transport.Request {
	t.Helper()
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: op}}
	msg := bytes.Repeat([]byte{byte(op)}, 2*EagerMax)
	buf := make([]byte, len(msg))
	rr := eps[1].Recv(0, tag, buf)
	sr := eps[0].Send(1, tag, msg)
	if n, err := rr.Wait(ctx); err != nil || n != len(msg) || !bytes.Equal(buf, msg) {
		t.Fatalf("receive: %d bytes, %v", n, err)
	}
	if sr.(*request).Completed() {
		t.Fatal("the send completed while its sender could not poll")
	}
	return sr
}

// TestCopiedSendSurvivesPeerDown: a send its receiver copied completes
// without error when the receiver goes down before the sender saw the
// copy (the receiver's BYE read in the same poll as the count that
// announced it), while a send it had not copied fails with the peer's
// error.
func TestCopiedSendSurvivesPeerDown(t *testing.T) {
	eps, ctx := copiedWorld(t)
	release := holdPolls(eps[0])
	sr := copiedUnseen(t, eps, ctx, 1)
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: 2}}
	pending := eps[0].Send(1, tag, make([]byte, 2*EagerMax)) // never received
	down := errors.New("rank 1 went down")
	eps[0].peerDown(1, down)
	release()
	if n, err := sr.Wait(ctx); err != nil || n != 2*EagerMax {
		t.Fatalf("copied send after its receiver went down: %d bytes, %v; want %d, nil", n, err, 2*EagerMax)
	}
	if _, err := pending.Wait(ctx); !errors.Is(err, down) {
		t.Fatalf("uncopied send after its receiver went down: %v, want %v", err, down)
	}
}

// TestCancelOfCopiedSendWaitsForItsPoll: a Cancel of a send that was
// copied but not yet seen cannot withdraw it (its word is no longer
// posted); it returns once the sender's poll completes the send, with
// Cancel's error, as a Cancel of a claimed send does.
func TestCancelOfCopiedSendWaitsForItsPoll(t *testing.T) {
	eps, ctx := copiedWorld(t)
	release := holdPolls(eps[0])
	sr := copiedUnseen(t, eps, ctx, 1)
	cancelled := make(chan struct{})
	go func() {
		sr.Cancel()
		close(cancelled)
	}()
	select {
	case <-cancelled:
		t.Fatal("Cancel returned before the copied send was seen")
	case <-time.After(20 * time.Millisecond):
	}
	release()
	select {
	case <-cancelled:
	case <-ctx.Done():
		t.Fatal("Cancel did not return once the sender polled")
	}
	if _, err := sr.Wait(ctx); !errors.Is(err, transport.ErrCancelled) {
		t.Fatalf("copied send cancelled before it was seen: %v, want ErrCancelled", err)
	}
}
