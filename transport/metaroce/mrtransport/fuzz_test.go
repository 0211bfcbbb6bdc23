package mrtransport

import (
	"strings"
	"testing"

	"github.com/gocoll/gocoll/transport"
)

// FuzzParseAbort feeds arbitrary bytes to the control message parser: it
// must never panic, and whatever it accepts must encode back to the same
// bytes.
func FuzzParseAbort(f *testing.F) {
	f.Add(appendAbort(nil, transport.OpKey{Comm: 1, Op: 2}, "boom"))
	f.Add(appendAbort(nil, transport.OpKey{Comm: ^uint64(0), Op: 1 << 40}, ""))
	f.Add(appendAbort(nil, transport.OpKey{}, strings.Repeat("x", MaxReasonBytes)))
	f.Add([]byte{ctrlVersion, ctrlAbort})
	f.Fuzz(func(t *testing.T, b []byte) {
		op, reason, err := parseAbort(b)
		if err != nil {
			return
		}
		if again := appendAbort(nil, op, reason); string(again) != string(b) {
			t.Fatalf("parse(%x) = %v %q, which encodes as %x", b, op, reason, again)
		}
	})
}

func TestAbortMessageRoundTrip(t *testing.T) {
	op := transport.OpKey{Comm: 0xfeed, Op: 77}
	long := strings.Repeat("r", MaxReasonBytes+10)
	gotOp, reason, err := parseAbort(appendAbort(nil, op, long))
	if err != nil || gotOp != op || reason != long[:MaxReasonBytes] {
		t.Fatalf("round trip: %v %q %v", gotOp, reason, err)
	}
	for _, bad := range [][]byte{nil, {2, 1}, append(appendAbort(nil, op, "x"), 0), appendAbort(nil, op, "xy")[:ctrlHeaderLen+1]} {
		if _, _, err := parseAbort(bad); err == nil {
			t.Fatalf("parseAbort(%x) accepted", bad)
		}
	}
}

// FuzzParsePeerAddr feeds arbitrary strings to the address parser: it
// must never panic, and whatever it accepts must print back to an address
// that parses to the same value.
func FuzzParsePeerAddr(f *testing.F) {
	f.Add("127.0.0.1:4000")
	f.Add("127.0.0.1:4000,127.0.0.1:4001,[::1]:5000")
	f.Add("")
	f.Add(",")
	f.Add(strings.Repeat("1.2.3.4:5,", 300))
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParsePeerAddr(s)
		if err != nil {
			return
		}
		if len(a.Paths) == 0 {
			t.Fatalf("ParsePeerAddr(%q) accepted no paths", s)
		}
		b, err := ParsePeerAddr(a.String())
		if err != nil || b.String() != a.String() {
			t.Fatalf("ParsePeerAddr(%q) = %v, which reparses as %v, %v", s, a, b, err)
		}
	})
}

// TestKeyMapping checks the tag-to-key mapping's promises: data keys never
// collide with control keys, differ for tags that differ in Comm, Seq or the
// low 31 bits of Op, and give back the operation they came from.
func TestKeyMapping(t *testing.T) {
	tags := []transport.Tag{
		{}, {Seq: 1}, {OpKey: transport.OpKey{Op: 1}}, {OpKey: transport.OpKey{Comm: 1}},
		{OpKey: transport.OpKey{Comm: ^uint64(0), Op: opMask}, Seq: ^uint32(0)},
	}
	seen := map[msgKey]transport.Tag{}
	for _, tg := range tags {
		k := dataKey(tg)
		if k.isCtrl() {
			t.Fatalf("data key %v of %v is a control key", k, tg)
		}
		if o, dup := seen[k]; dup {
			t.Fatalf("tags %v and %v share key %v", o, tg, k)
		}
		seen[k] = tg
		if k.opOf() != lowOf(tg.OpKey) {
			t.Fatalf("key %v of %v names operation %v", k, tg, k.opOf())
		}
	}
	wrap := transport.Tag{OpKey: transport.OpKey{Op: 1 << opBits}}
	if dataKey(wrap) != dataKey(transport.Tag{}) {
		t.Fatal("operations 2^31 apart are documented to share keys")
	}
	if !ctrlKey(5).isCtrl() || ctrlKey(5) == ctrlKey(6) {
		t.Fatal("control keys")
	}
}
