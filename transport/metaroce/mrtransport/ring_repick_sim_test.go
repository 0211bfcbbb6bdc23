package mrtransport

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// placement returns how many of from's paths to to hash onto each link
// at the start (the direction of from's data).
func simPlacement(ecmp *SimECMP, from, to []netip.AddrPort) []int {
	n := make([]int, ecmp.Links)
	for i := range from {
		n[ecmp.ECMPLink(from[i], to[i])]++
	}
	return n
}

// receiverRun streams 4 MiB messages from rank 1 to rank 0 (the
// connection's lower-ranked end, which alone re-picks, only receives)
// over links like ecmpSimLink for dur, and returns the links carrying at
// least 5 % of each ecmpSimWindow's bytes from 1 to 0, and the repicks.
func receiverRun(t *testing.T, seed uint64, cfg Config, dur time.Duration, skip func([]int) bool) (start []int, cover []int, repicks int64, ok bool) {
	synctest.Test(t, func(t *testing.T) {
		var lw logLines
		if os.Getenv("RECV_SIM_LOG") != "" {
			cfg.Logger = slog.New(slog.NewTextHandler(&lw, nil))
			defer func() { t.Log(lw.b.String()) }()
		}
		ctx, cancel := context.WithTimeout(context.Background(), dur+time.Minute)
		defer cancel()
		cfg.ListenAddr = netip.MustParseAddrPort("10.0.0.1:0")
		cfg.MaxDatagram = 8972
		cfg.Core.IDSeed = seed | 1
		cfg.Paths = 8
		ecmp := &SimECMP{Links: 4, Link: ecmpSimLink, Seed: seed}
		eps, net, err := NewSimWorld(ctx, 2, cfg, SimConfig{Fabric: simfabric.Config{Seed: int64(seed)}, ECMP: ecmp})
		if err != nil {
			t.Fatal(err)
		}
		defer net.Close()
		defer func() {
			for _, ep := range eps {
				_ = ep.Close()
			}
		}()
		start = simPlacement(ecmp, eps[1].Addr().Paths, eps[0].Addr().Paths)
		if skip(start) {
			return
		}
		ok = true
		if ms, _ := strconv.Atoi(os.Getenv("RECV_SIM_PRELUDE_MS")); ms > 0 {
			// A small exchange first (rank 0's early phase starts with
			// its first data acknowledged), then idle: the bulk data
			// comes after the early phase.
			small := make([]byte, 64<<10)
			r := eps[1].Recv(0, benchTag(8, 0), make([]byte, 64<<10))
			s := eps[0].Send(1, benchTag(8, 0), small)
			if _, err := r.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(ms) * time.Millisecond)
		}
		begin := time.Now()
		done := make(chan error, 1)
		go func() {
			src, dst := make([]byte, 4<<20), make([]byte, 4<<20)
			for i := uint32(0); time.Since(begin) < dur; i++ {
				r := eps[0].Recv(1, benchTag(9, i), dst)
				s := eps[1].Send(0, benchTag(9, i), src)
				if _, err := r.Wait(ctx); err != nil {
					done <- err
					return
				}
				if _, err := s.Wait(ctx); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		prev := make([]int64, 4)
		for at := ecmpSimWindow; at <= dur; at += ecmpSimWindow {
			time.Sleep(time.Until(begin.Add(at)))
			now := net.ECMPLinkBytes(1, 0)
			var total int64
			d := make([]int64, 4)
			for l := range now {
				d[l] = now[l] - prev[l]
				total += d[l]
			}
			prev = now
			n := 0
			for l := range d {
				if total > 0 && d[l]*20 >= total {
					n++
				}
			}
			cover = append(cover, n)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		repicks, _ = eps[0].Repicks()
	})
	return
}

func TestReceiverRepickTable(t *testing.T) {
	seeds, _ := strconv.Atoi(os.Getenv("RECV_SIM_SEEDS"))
	if seeds <= 0 {
		t.Skip("RECV_SIM_SEEDS unset")
	}
	found := 0
	for seed := uint64(1); found < seeds && seed < 2000; seed++ {
		start, cover, rp, ok := receiverRun(t, seed, Config{}, 8*time.Second, func(s []int) bool {
			z := 0
			for _, n := range s {
				if n == 0 {
					z++
				}
			}
			return z != 1
		})
		if !ok {
			continue
		}
		found++
		t.Logf("seed %d start %v cover %v repicks %d", seed, start, cover, rp)
	}
}

type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.Contains(string(p), "crowded") || strings.Contains(string(p), "undone") || strings.Contains(string(p), "behave") {
		l.b.Write(p)
	}
	return len(p), nil
}
