package mrtransport

import (
	"bufio"
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// TestSendSamplerNamesTheLimit runs the send sampler (Config.SendSamples)
// on a 4 MiB send over a simulated WAN pair (200 Mbit/s, 2 ms one way)
// whose receive is posted 30 ms late, with 256 KiB of credit: the
// samples of the first 30 ms must name the credit (data posted, unsent,
// held by the receiver), those after it the windows or pacing, and the
// file Close writes must hold them all, one line each. Rank 1 sends
// nothing, so it keeps no sample; a sampler that is off keeps none. Every
// sample's Unwritten lies within a batch (the engine's counters agree),
// and the last one's RTTs cover the 4 ms loop.
func TestSendSamplerNamesTheLimit(t *testing.T) {
	const size = 4 << 20
	file := filepath.Join(t.TempDir(), "samples")
	var samples []SendSample
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg := Config{Paths: 4, ListenAddr: netip.MustParseAddrPort("10.0.0.1:0"), MaxDatagram: 8972,
			Core: metaroce.Config{IDSeed: 3, UnexpectedBytes: 256 << 10, UnexpectedMax: 256 << 10}}
		cfg.Repick.Off = true
		eps, net, err := NewSimWorld(ctx, 2, cfg, SimConfig{
			Link: simfabric.LinkConfig{Rate: 25_000_000, Delay: 2 * time.Millisecond, QueueBytes: 4 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		defer net.Close()
		if eps[0].SendSamples() != nil {
			t.Fatal("samples kept with the sampler off")
		}
		_ = eps[0].Close()
		_ = eps[1].Close()
		net.Close()

		cfg.SendSamples = file
		eps, net, err = NewSimWorld(ctx, 2, cfg, SimConfig{
			Link: simfabric.LinkConfig{Rate: 25_000_000, Delay: 2 * time.Millisecond, QueueBytes: 4 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		defer net.Close()
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 3, Op: 1}}
		start := time.Now()
		send := eps[0].Send(1, tag, make([]byte, size))
		time.Sleep(30 * time.Millisecond)
		if _, err := eps[1].Recv(0, tag, make([]byte, size)).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := send.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		samples = eps[0].SendSamples()
		if got := eps[1].SendSamples(); len(got) != 0 {
			t.Errorf("rank 1 sent nothing but kept %d samples", len(got))
		}
		for _, ep := range eps {
			_ = ep.Close()
		}
		t.Logf("call %v, %d samples", time.Since(start), len(samples))
	})
	count := map[metaroce.SendLimit]int{}
	var early, late int
	for _, s := range samples {
		if s.Peer != 1 {
			t.Fatalf("sample of peer %d", s.Peer)
		}
		count[s.Limit]++
		if s.Unwritten < 0 || s.Unwritten > 256 {
			t.Fatalf("sample at %v: %d datagrams polled and not written (the counters drift)", s.At, s.Unwritten)
		}
		if s.Limit == metaroce.LimitCredit && s.Unsent > size/2 {
			early++
		}
		if s.Limit == metaroce.LimitWindow || s.Limit == metaroce.LimitPace {
			late++
		}
	}
	if last := samples[len(samples)-1]; last.SRTT < 4*time.Millisecond || last.FabricSRTT < 4*time.Millisecond {
		t.Fatalf("last sample's RTTs %v (fabric %v), want >= the 4 ms loop", last.SRTT, last.FabricSRTT)
	}
	t.Logf("limits: %v", count)
	if early < 20 || late < 5 {
		t.Fatalf("%d credit-held samples with most of the message unsent (want >= 20 of the first 30 ms), %d window or pace ones (want >= 5): %v",
			early, late, count)
	}
	f, err := os.Open(file + ".0")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, sc := 0, bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); !strings.HasPrefix(l, "#") {
			if n := len(strings.Fields(l)); n != len(strings.Fields(sampleHeader))-1 {
				t.Fatalf("line %q has %d fields", l, n)
			}
			lines++
		}
	}
	if lines < len(samples) {
		t.Fatalf("file holds %d samples, the endpoint kept %d", lines, len(samples))
	}
}
