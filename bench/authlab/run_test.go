package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

// runWorld runs o's test on every rank of a loopback world of size ranks
// (ports chosen by the system, so not through run's fixed ports) and
// returns the printing rank's result.
func runWorld(t *testing.T, size int, o options, key jobkey.Key) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := mrtransport.Config{Paths: o.paths}
	cfg.Core.Auth = authConfig(o.mode, key)
	eps, err := mrtransport.NewLocalWorld(ctx, size, cfg)
	if err != nil {
		t.Fatal(err)
	}
	results, errs := make([]result, size), make([]error, size)
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			defer func() { _ = ep.Close() }()
			o := o
			o.rank = r
			results[r], errs[r] = runTest(ctx, transport.Endpoint(ep), o)
		})
	}
	wg.Wait()
	var out result
	for r := range size {
		if errs[r] != nil {
			t.Fatalf("%s mode=%v rank %d: %v", o.test, o.mode, r, errs[r])
		}
		if results[r].line != "" {
			if out.line != "" {
				t.Fatalf("two ranks printed: %q and %q", out.line, results[r].line)
			}
			out = results[r]
		}
	}
	if out.line == "" {
		t.Fatalf("%s mode=%v: no rank printed", o.test, o.mode)
	}
	return out
}

// TestRunEveryMode runs both tests in every mode on loopback: exact data,
// one line with the fields bench/auth_lab.sh reads.
func TestRunEveryMode(t *testing.T) {
	key, err := jobkey.Parse("authlab-test-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		o := options{mode: mode, paths: 2, size: 1<<20 + 12, n: 3, test: "p2p"}
		res := runWorld(t, 2, o, key)
		if res.wrong != 0 || !strings.Contains(res.line, "mode="+mode.String()+" ") ||
			!strings.Contains(res.line, " goodput_mbit=") || !strings.HasSuffix(res.line, " wrong=0") {
			t.Errorf("p2p mode=%v: %+v", mode, res)
		}
		o.test, o.size = "allreduce", 1<<20
		res = runWorld(t, 4, o, key)
		if res.wrong != 0 || !strings.Contains(res.line, "mode="+mode.String()+" ") ||
			!strings.Contains(res.line, " busbw_gbs=") || !strings.HasSuffix(res.line, " wrong=0") {
			t.Errorf("allreduce mode=%v: %+v", mode, res)
		}
	}
}
