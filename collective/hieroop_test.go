package collective_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// readCheckEndpoint checks, as each send of 64 bytes or more is posted,
// except an operation header (its first byte 0xC0: it may carry a pair's
// small first message, copied into it), the bytes it reads when they lie
// outside mine (the rank's send buffer): bad reports an
// element there that is still this rank's own contribution alone, or the
// sentinel the receive buffer was filled with, i.e. a send of a copy of
// this rank's data that was made before any reduction (or of nothing).
type readCheckEndpoint struct {
	transport.Endpoint
	mu   sync.Mutex
	mine []int32
	own  int32
	fill int32
	bad  error
}

func (e *readCheckEndpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	e.mu.Lock()
	if e.bad == nil && len(buf) >= 64 && buf[0] != 0xC0 && len(e.mine) > 0 {
		lo := uintptr(unsafe.Pointer(&e.mine[0]))
		hi := lo + uintptr(4*len(e.mine))
		if p := uintptr(unsafe.Pointer(&buf[0])); p < lo || p >= hi {
			vals := unsafe.Slice((*int32)(unsafe.Pointer(&buf[0])), len(buf)/4)
			for i, v := range vals {
				if v == e.own || v == e.fill {
					e.bad = fmt.Errorf("a send to %d of %d bytes outside send reads element %d = %d, unreduced", peer, len(buf), i, v)
					break
				}
			}
		}
	}
	e.mu.Unlock()
	return e.Endpoint.Send(peer, tag, buf)
}

// check returns the first bad send seen and stops watching.
func (e *readCheckEndpoint) check() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mine = nil
	return e.bad
}

// runReadChecked runs body on every rank of eps at once, each over a
// readCheckEndpoint (own = 1<<rank, fill) with a communicator of cfg:
// body builds the rank's send buffer, hands it to watch (the checker's
// mine) before the call, makes the call and checks its results; a failed
// call or a bad send fails t, naming the rank.
func runReadChecked(t *testing.T, eps []transport.Endpoint, cfg collective.Config, fill int32,
	body func(ctx context.Context, c *collective.Comm, r int, own int32, watch func([]int32)) error) {
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			own := int32(1) << r
			we := &readCheckEndpoint{Endpoint: ep, own: own, fill: fill}
			c, err := collective.New(we, 1, cfg)
			if err != nil {
				t.Error(err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			watch := func(send []int32) {
				we.mu.Lock()
				we.mine = send
				we.mu.Unlock()
			}
			if err := body(ctx, c, r, own, watch); err != nil {
				t.Errorf("rank %d: %v", r, err)
				return
			}
			if bad := we.check(); bad != nil {
				t.Errorf("rank %d: %v", r, bad)
			}
		})
	}
	wg.Wait()
}

// TestHierarchicalOutOfPlaceReadsSend runs the hierarchical AllReduce out
// of place and checks that no send reads the receive buffer where it holds
// only the rank's own contribution (or nothing yet): those sends read the
// send buffer, so nothing needs copying to recv before the first message
// moves. The up-front copy the AllReduce used to make (recv = send, then
// every phase in place) fails it at the first step. Each rank adds 1<<r,
// so any element summed with another rank's differs from every single
// contribution. The results, and the send buffer left unchanged, are
// checked too, for the lab's grid (many pieces and chunks), uneven and
// cyclic placements, two ranks on two sites (the top ring of two as one
// exchange) and no topology (one ring).
func TestHierarchicalOutOfPlaceReadsSend(t *testing.T) {
	bySite := func(sites ...string) func(int) string { return func(h int) string { return sites[h%len(sites)] } }
	placements := []struct {
		name   string
		hostOf []int
		siteOf func(int) string
	}{
		{"lab grid 2x2x2", []int{0, 0, 1, 1, 2, 2, 3, 3}, func(h int) string { return []string{"e", "e", "w", "w"}[h] }},
		{"cyclic 3+2+2+1 on two sites", []int{0, 1, 2, 0, 1, 2, 0, 3}, bySite("e", "w")},
		{"3 and 1 on one site", []int{0, 0, 1, 0}, bySite("s")},
		{"two sites of one rank", []int{0, 1}, bySite("e", "w")},
		{"one rank per host, three sites", []int{0, 1, 2, 3, 4}, bySite("a", "b", "c")},
		{"no topology, 3 ranks", []int{0, 0, 0}, nil},
	}
	const fill = 0x5a5a5a5a
	for _, pc := range placements {
		for _, count := range []int{1000, 300000} {
			t.Run(fmt.Sprintf("%s/%d", pc.name, count), func(t *testing.T) {
				n := len(pc.hostOf)
				var tp *topology.Topology
				if pc.siteOf != nil {
					tp = placedTopology(t, pc.hostOf, pc.siteOf)
				}
				cfg := collective.Config{AllReduce: collective.AlgoHierarchical, Topology: tp, ChunkBytes: collective.ChunkBytesMin}
				runReadChecked(t, inprocWorld(t, n), cfg, fill, func(ctx context.Context, c *collective.Comm, r int, own int32, watch func([]int32)) error {
					send, recv := make([]int32, count), make([]int32, count)
					for i := range send {
						send[i], recv[i] = own, fill
					}
					watch(send)
					if err := collective.AllReduce(ctx, c, send, recv, collective.Sum); err != nil {
						return err
					}
					for i := range recv {
						if recv[i] != int32(1)<<n-1 || send[i] != own {
							t.Errorf("rank %d: element %d: recv %d (want %d), send %d (want %d)", r, i, recv[i], int32(1)<<n-1, send[i], own)
							break
						}
					}
					return nil
				})
			})
		}
	}
}

// TestHierarchicalReduceScatterReadsSend checks the hierarchical
// ReduceScatter the same way: at a level whose groups differ, the group's
// ring runs over the blocks regrouped by slot (packed), and no send may
// read a packed copy of this rank's own blocks: they go from send, where
// a chunk lies in one block (blocks of two chunks here: chunks that span
// blocks are packed just before they go). Packing send whole before the
// ring, as the ReduceScatter used to, fails it at the ring's first step.
func TestHierarchicalReduceScatterReadsSend(t *testing.T) {
	hostOf := []int{0, 0, 1, 1, 2, 2, 3, 3}
	tp := placedTopology(t, hostOf, func(h int) string { return []string{"e", "e", "w", "w"}[h] })
	n, count := len(hostOf), 2*collective.ChunkBytesMin/4
	cfg := collective.Config{ReduceScatter: collective.AlgoHierarchical, Topology: tp, ChunkBytes: collective.ChunkBytesMin}
	runReadChecked(t, inprocWorld(t, n), cfg, 0x5a5a5a5a, func(ctx context.Context, c *collective.Comm, r int, own int32, watch func([]int32)) error {
		send, recv := make([]int32, n*count), make([]int32, count)
		for i := range send {
			send[i] = own
		}
		watch(send)
		if err := collective.ReduceScatter(ctx, c, send, recv, collective.Sum); err != nil {
			return err
		}
		for i, v := range recv {
			if v != int32(1)<<n-1 {
				t.Errorf("rank %d: element %d is %d, want %d", r, i, v, int32(1)<<n-1)
				break
			}
		}
		return nil
	})
}

// TestHierarchicalOutOfPlaceSameBits checks that the out-of-place
// hierarchical AllReduce, whose first reductions read the send buffer,
// gives the very bits of the in-place one (the same operands in the same
// order), for Sum and Avg on float32 values whose sums round.
func TestHierarchicalOutOfPlaceSameBits(t *testing.T) {
	hostOf := []int{0, 1, 2, 0, 1, 2, 0, 3}
	tp := placedTopology(t, hostOf, func(h int) string { return []string{"e", "w"}[h%2] })
	n, count := len(hostOf), 100003
	for _, op := range []collective.Op{collective.Sum, collective.Avg} {
		eps := inprocWorld(t, n)
		var wg sync.WaitGroup
		for r, ep := range eps {
			wg.Go(func() {
				c, err := collective.New(ep, 1, collective.Config{AllReduce: collective.AlgoHierarchical, Topology: tp, ChunkBytes: collective.ChunkBytesMin})
				if err != nil {
					t.Error(err)
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				rng := rand.New(rand.NewPCG(uint64(r), 7))
				send := make([]float32, count)
				for i := range send {
					send[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(6))))
				}
				inPlace := append([]float32(nil), send...)
				out := make([]float32, count)
				if err := collective.AllReduce(ctx, c, send, out, op); err != nil {
					t.Error(err)
					return
				}
				if err := collective.AllReduce(ctx, c, inPlace, inPlace, op); err != nil {
					t.Error(err)
					return
				}
				for i := range out {
					if math.Float32bits(out[i]) != math.Float32bits(inPlace[i]) {
						t.Errorf("%v rank %d: element %d: out of place %v, in place %v", op, r, i, out[i], inPlace[i])
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// recvCountEndpoint counts the bytes of the receives of 64 bytes or more
// posted into watch.
type recvCountEndpoint struct {
	transport.Endpoint
	mu    sync.Mutex
	watch []int32
	bytes int
}

func (e *recvCountEndpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	e.mu.Lock()
	if len(buf) >= 64 && len(e.watch) > 0 {
		lo := uintptr(unsafe.Pointer(&e.watch[0]))
		if p := uintptr(unsafe.Pointer(&buf[0])); p >= lo && p < lo+uintptr(4*len(e.watch)) {
			e.bytes += len(buf)
		}
	}
	e.mu.Unlock()
	return e.Endpoint.Recv(peer, tag, buf)
}

// TestHierarchicalAllGatherLandsInPlace checks that the hierarchical
// AllGather's host-level ring, which runs over the blocks regrouped by
// slot (packed), receives the other member's blocks straight into the
// caller's buffer (blocks of two chunks here: a chunk spanning blocks
// lands in packed and is copied out as it arrives) instead of into packed
// and copying packed back whole at the end, as it used to (then nothing
// lands in the caller's buffer). On the lab's grid that ring receives half
// the buffer.
func TestHierarchicalAllGatherLandsInPlace(t *testing.T) {
	hostOf := []int{0, 0, 1, 1, 2, 2, 3, 3}
	tp := placedTopology(t, hostOf, func(h int) string { return []string{"e", "e", "w", "w"}[h] })
	n, count := len(hostOf), 2*collective.ChunkBytesMin/4
	eps := inprocWorld(t, n)
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			we := &recvCountEndpoint{Endpoint: ep}
			c, err := collective.New(we, 1, collective.Config{AllGather: collective.AlgoHierarchical, Topology: tp, ChunkBytes: collective.ChunkBytesMin})
			if err != nil {
				t.Error(err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			send, recv := make([]int32, count), make([]int32, n*count)
			for i := range send {
				send[i] = int32(r*count + i)
			}
			we.mu.Lock()
			we.watch = recv
			we.mu.Unlock()
			if err := collective.AllGather(ctx, c, send, recv); err != nil {
				t.Errorf("rank %d: %v", r, err)
				return
			}
			we.mu.Lock()
			landed := we.bytes
			we.watch = nil
			we.mu.Unlock()
			if landed < 4*len(recv)/2 {
				t.Errorf("rank %d: %d bytes received into recv, want at least %d", r, landed, 4*len(recv)/2)
			}
			for i, v := range recv {
				if v != int32(i) {
					t.Errorf("rank %d: element %d is %d", r, i, v)
					return
				}
			}
		})
	}
	wg.Wait()
}
