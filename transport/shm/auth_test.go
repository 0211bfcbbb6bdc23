//go:build linux

package shm_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

func shmKey(t *testing.T, text string) jobkey.Key {
	t.Helper()
	k, err := jobkey.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// connectKeys connects one rank per key in this process and returns each
// rank's endpoint (nil on failure) and error.
func connectKeys(t *testing.T, keys []jobkey.Key) ([]*shm.Endpoint, []error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := len(keys)
	ls, addrs := make([]*shm.Listener, n), make([]string, n)
	for r, k := range keys {
		l, err := shm.Listen(shm.Config{Rank: r, Size: n, Key: k})
		if err != nil {
			t.Fatal(err)
		}
		ls[r], addrs[r] = l, l.Addr().String()
	}
	eps, errs := make([]*shm.Endpoint, n), make([]error, n)
	var wg sync.WaitGroup
	for r, l := range ls {
		wg.Go(func() {
			eps[r], errs[r] = l.Connect(ctx, addrs)
			if errs[r] != nil {
				_ = l.Close()
			}
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, ep := range eps {
			if ep != nil {
				_ = ep.Close()
			}
		}
	})
	return eps, errs
}

// With one key the ranks connect and talk; with another key, or none, at
// one rank, every rank's Connect fails at once naming a rank that cannot
// prove the key.
func TestAuthRendezvous(t *testing.T) {
	good, bad := shmKey(t, "test-key-0123456789abcdef"), shmKey(t, "another-key-0123456789abcdef")
	eps, errs := connectKeys(t, []jobkey.Key{good, good, good})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	buf := make([]byte, 5)
	rq := eps[2].Recv(0, transport.Tag{Seq: 1}, buf)
	if _, err := eps[0].Send(2, transport.Tag{Seq: 1}, []byte("hello")).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rq.Wait(ctx); err != nil || string(buf) != "hello" {
		t.Fatalf("received %q, %v", buf, err)
	}

	for _, tc := range []struct {
		name string
		odd  jobkey.Key // rank 1's
		want string     // in the other ranks' errors
	}{
		{"wrong key", bad, "rank 1 holds another job key"},
		{"no key", jobkey.Key{}, "rank 1 holds no job key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, errs := connectKeys(t, []jobkey.Key{good, tc.odd, good})
			if time.Since(start) > 8*time.Second {
				t.Fatalf("refused only at the deadline")
			}
			named := 0
			for r, err := range errs {
				if err == nil {
					t.Fatalf("rank %d connected with a stranger", r)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("rank %d: a multi-line error: %q", r, err)
				}
				if r != 1 && strings.Contains(err.Error(), tc.want) {
					named++
				}
				t.Logf("rank %d: %v", r, err)
			}
			// A rank may instead find a refusing rank's segment gone.
			if named == 0 {
				t.Fatalf("no rank's error says %q", tc.want)
			}
		})
	}
}
