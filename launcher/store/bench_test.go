package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

func benchServer(b *testing.B) (*Server, func() *Client) { return benchServerTags(b, true) }

// benchServerTags is benchServer with or without the frames' tags (the
// handshake runs either way), to measure what the tags cost.
func benchServerTags(b *testing.B, tags bool) (*Server, func() *Client) {
	srv, err := Listen(b.Context(), "127.0.0.1:0", Config{JobKey: testJobKey, untagged: !tags})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	return srv, func() *Client {
		c, err := Dial(b.Context(), srv.Addr().String(), ClientConfig{JobKey: testJobKey, untagged: !tags})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		return c
	}
}

// BenchmarkSetGet measures one Set and one Get of a 64-byte value.
func BenchmarkSetGet(b *testing.B) {
	value := make([]byte, 64)
	run := func(b *testing.B, s Store) {
		ctx := context.Background()
		for b.Loop() {
			if err := s.Set(ctx, "k", value); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Get(ctx, "k"); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("mem", func(b *testing.B) { run(b, NewMemStore(Limits{})) })
	b.Run("tcp", func(b *testing.B) {
		_, dial := benchServer(b)
		run(b, dial())
	})
	b.Run("tcp-untagged", func(b *testing.B) {
		_, dial := benchServerTags(b, false)
		run(b, dial())
	})
}

// BenchmarkAddParallel measures Adds from many goroutines sharing one
// Client's connection, with and without the frames' tags.
func BenchmarkAddParallel(b *testing.B) {
	for _, tags := range []bool{true, false} {
		b.Run(map[bool]string{true: "tagged", false: "untagged"}[tags], func(b *testing.B) {
			_, dial := benchServerTags(b, tags)
			c := dial()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Add(context.Background(), "n", 1); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkDial measures a connection's handshake (two nonces, two proofs).
func BenchmarkDial(b *testing.B) {
	srv, _ := benchServer(b)
	for b.Loop() {
		c, err := Dial(b.Context(), srv.Addr().String(), ClientConfig{JobKey: testJobKey})
		if err != nil {
			b.Fatal(err)
		}
		_ = c.Close()
	}
}

// BenchmarkAllGather16 measures one AllGather of 16 ranks, each with its
// own connection, exchanging 32-byte addresses.
func BenchmarkAllGather16(b *testing.B) {
	const size = 16
	_, dial := benchServer(b)
	clients := make([]*Client, size)
	for r := range clients {
		clients[r] = dial()
	}
	value := make([]byte, 32)
	for i := 0; b.Loop(); i++ {
		var wg sync.WaitGroup
		for r := range size {
			wg.Go(func() {
				if _, err := AllGather(context.Background(), clients[r], r, size, fmt.Sprint("ag", i%4), value); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
}

// BenchmarkSeal measures tagging and checking one frame (a set of a
// 64-byte value), the CPU the tags add to each request and each reply.
func BenchmarkSeal(b *testing.B) {
	sess := newSession(testJobKey, make([]byte, 16), make([]byte, 16))
	out, in := newSealer(sess.c2s), newSealer(sess.c2s)
	frame, err := appendRequest(nil, &request{op: opSet, id: 1, items: [][]byte{[]byte("key"), make([]byte, 64)}})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, len(frame)+tagBytes)
	for b.Loop() {
		sealed, err := out.sealFrame(append(buf[:0], frame...), 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := in.open(sealed[frameLenBytes:]); err != nil {
			b.Fatal(err)
		}
	}
}
