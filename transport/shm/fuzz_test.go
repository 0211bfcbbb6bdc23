package shm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gocoll/gocoll/transport"
)

// seedSlots are one valid slot of each kind, as a peer would write them.
func seedSlots() []slot {
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 0xc0ffee, Op: 42}, Seq: 7}
	msg := []byte("seven b")
	reason := []byte("rank 3 gave up")
	return []slot{
		{kind: kindInline, tag: tag, length: uint64(len(msg)), inline: msg},
		{kind: kindInline, tag: tag, length: 0, inline: nil},
		{kind: kindInline, tag: tag, length: InlineMax, inline: bytes.Repeat([]byte{0xa5}, InlineMax)},
		{kind: kindRendezvous, tag: tag, length: 3<<20 + 5, sendID: 5<<32 | 17, addr: 0x7f0012345000},
		{kind: kindRendezvous, tag: tag, length: InlineMax + 1, sendID: 1, addr: 1},
		{kind: kindRendezvous, tag: tag, length: 64 << 10, headSeq: 3, sendID: 2, addr: 1, inline: msg},
		{kind: kindAbort, tag: transport.Tag{OpKey: tag.OpKey}, inline: reason},
		{kind: kindBye},
	}
}

func encodeSlot(s slot) []byte {
	b := make([]byte, SlotBytes)
	s.encode(b)
	return b
}

// sameSlot reports whether a and b carry the same fields and inline bytes.
func sameSlot(a, b slot) bool {
	return a.kind == b.kind && a.tag == b.tag && a.length == b.length && a.headSeq == b.headSeq &&
		a.sendID == b.sendID && a.addr == b.addr && bytes.Equal(a.inline, b.inline)
}

// TestSlotRoundTrip checks that every seed slot decodes to itself.
func TestSlotRoundTrip(t *testing.T) {
	for _, s := range seedSlots() {
		got, err := decodeSlot(encodeSlot(s))
		if err != nil {
			t.Fatalf("kind %d: %v", s.kind, err)
		}
		if !sameSlot(got, s) {
			t.Fatalf("kind %d: decoded %+v, want %+v", s.kind, got, s)
		}
	}
}

// FuzzDecodeSlot checks that decodeSlot never panics on bytes from a peer,
// and that whatever it accepts encodes back to a slot that decodes the same.
func FuzzDecodeSlot(f *testing.F) {
	for _, s := range seedSlots() {
		f.Add(encodeSlot(s))
	}
	f.Add([]byte{})
	f.Add(make([]byte, SlotBytes+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The input as it is exercises the length check; fitted to a
		// slot it exercises the field checks.
		if s, err := decodeSlot(b); err == nil {
			checkReencode(t, s)
		} else if len(b) != SlotBytes && !strings.Contains(err.Error(), "bytes") {
			t.Fatalf("%d-byte input: error %q does not name the length", len(b), err)
		}
		fitted := make([]byte, SlotBytes)
		copy(fitted, b)
		if s, err := decodeSlot(fitted); err == nil {
			checkReencode(t, s)
		}
	})
}

// checkReencode checks that slot s, accepted by decodeSlot, re-encodes to
// bytes that decode to the same slot.
func checkReencode(t *testing.T, s slot) {
	t.Helper()
	if len(s.inline) > InlineMax {
		t.Fatalf("accepted %d inline bytes", len(s.inline))
	}
	kept := s
	kept.inline = append([]byte(nil), s.inline...)
	again, err := decodeSlot(encodeSlot(kept))
	if err != nil {
		t.Fatalf("accepted %+v, but its encoding is refused: %v", kept, err)
	}
	if !sameSlot(again, kept) {
		t.Fatalf("re-encoded slot decodes to %+v, want %+v", again, kept)
	}
}

const testBootID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

// testNS is a PID namespace inode as addresses carry it.
const testNS = ":4026531836"

// FuzzParseAddr checks that ParseAddr never panics, and that an address it
// accepts is written back by String exactly as it was read.
func FuzzParseAddr(f *testing.F) {
	for _, a := range []Addr{
		{BootID: testBootID, PIDNS: 1, PID: 1, MemFD: 0, EventFD: 0, Nonce: 0},
		{BootID: testBootID, PIDNS: 4026531836, PID: 4242, MemFD: 7, EventFD: 8, Nonce: 0x0123456789abcdef},
		{BootID: "deadbeef", PIDNS: 1<<64 - 1, PID: 1<<31 - 1, MemFD: 1<<31 - 1, EventFD: 3, Nonce: 1<<64 - 1},
	} {
		f.Add(a.String())
	}
	f.Add("shm2:")
	f.Add("tcp://127.0.0.1:5000")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddr(s)
		if err != nil {
			return
		}
		if got := a.String(); got != s {
			t.Fatalf("ParseAddr(%q) = %+v, which String writes as %q", s, a, got)
		}
		if a.PIDNS == 0 || a.PID <= 0 || a.MemFD < 0 || a.EventFD < 0 || !validBootID(a.BootID) {
			t.Fatalf("ParseAddr(%q) accepted %+v", s, a)
		}
	})
}

// TestParseAddrRejects lists addresses ParseAddr must refuse.
func TestParseAddrRejects(t *testing.T) {
	good := Addr{BootID: testBootID, PIDNS: 4026531836, PID: 4242, MemFD: 7, EventFD: 8, Nonce: 0x0123456789abcdef}
	if a, err := ParseAddr(good.String()); err != nil || a != good {
		t.Fatalf("ParseAddr(%q) = %+v, %v; want %+v", good.String(), a, err, good)
	}
	const nonce = "0123456789abcdef"
	for _, tc := range []struct{ name, addr string }{
		{"empty", ""},
		{"prefix only", "shm2:"},
		{"old version", "shm1:" + testBootID + testNS + ":4242:7:8:" + nonce},
		{"old version and fields", "shm1:" + testBootID + ":4242:7:8:" + nonce},
		{"no prefix", testBootID + testNS + ":4242:7:8:" + nonce},
		{"uppercase prefix", "SHM2:" + testBootID + testNS + ":4242:7:8:" + nonce},
		{"missing PID namespace", "shm2:" + testBootID + ":4242:7:8:" + nonce},
		{"PID namespace 0", "shm2:" + testBootID + ":0:4242:7:8:" + nonce},
		{"negative PID namespace", "shm2:" + testBootID + ":-5:4242:7:8:" + nonce},
		{"PID namespace beyond uint64", "shm2:" + testBootID + ":18446744073709551616:4242:7:8:" + nonce},
		{"tcp address", "tcp://127.0.0.1:5000"},
		{"missing nonce", "shm2:" + testBootID + testNS + ":4242:7:8"},
		{"missing eventfd", "shm2:" + testBootID + testNS + ":4242:7:" + nonce},
		{"extra field", "shm2:" + testBootID + testNS + ":4242:7:8:" + nonce + ":9"},
		{"empty pid", "shm2:" + testBootID + testNS + "::7:8:" + nonce},
		{"pid 0", "shm2:" + testBootID + testNS + ":0:7:8:" + nonce},
		{"negative pid", "shm2:" + testBootID + testNS + ":-4242:7:8:" + nonce},
		{"pid beyond int32", "shm2:" + testBootID + testNS + ":2147483648:7:8:" + nonce},
		{"hex pid", "shm2:" + testBootID + testNS + ":0x10:7:8:" + nonce},
		{"negative memfd", "shm2:" + testBootID + testNS + ":4242:-1:8:" + nonce},
		{"negative eventfd", "shm2:" + testBootID + testNS + ":4242:7:-1:" + nonce},
		{"memfd not a number", "shm2:" + testBootID + testNS + ":4242:x:8:" + nonce},
		{"short nonce", "shm2:" + testBootID + testNS + ":4242:7:8:0123456789abcde"},
		{"long nonce", "shm2:" + testBootID + testNS + ":4242:7:8:0123456789abcdef0"},
		{"empty nonce", "shm2:" + testBootID + testNS + ":4242:7:8:"},
		{"nonce not hex", "shm2:" + testBootID + testNS + ":4242:7:8:0123456789abcdeg"},
		{"nonce with 0x", "shm2:" + testBootID + testNS + ":4242:7:8:0x23456789abcdef"},
		{"signed nonce", "shm2:" + testBootID + testNS + ":4242:7:8:+123456789abcdef"},
		{"uppercase boot id", "shm2:" + strings.ToUpper(testBootID) + testNS + ":4242:7:8:" + nonce},
		{"boot id too short", "shm2:0f1e2d3" + testNS + ":4242:7:8:" + nonce},
		{"boot id too long", "shm2:" + strings.Repeat("a", 65) + testNS + ":4242:7:8:" + nonce},
		{"boot id not hex", "shm2:0f1e2d3c-zz" + testNS + ":4242:7:8:" + nonce},
		{"empty boot id", "shm2:" + testNS + ":4242:7:8:" + nonce},
		{"space in boot id", "shm2: " + testBootID + testNS + ":4242:7:8:" + nonce},
	} {
		if a, err := ParseAddr(tc.addr); err == nil {
			t.Errorf("%s: ParseAddr(%q) = %+v, want an error", tc.name, tc.addr, a)
		}
	}
}

// TestParseAddrRejectsNonCanonical lists addresses that name a valid rank
// but are not written as Addr.String writes them (strconv alone would read
// signs, leading zeros and uppercase hex): ParseAddr refuses them, so an
// accepted address round-trips exactly.
func TestParseAddrRejectsNonCanonical(t *testing.T) {
	const nonce = "0123456789abcdef"
	for _, tc := range []struct{ name, addr string }{
		{"leading zero pid", "shm2:" + testBootID + testNS + ":04242:7:8:" + nonce},
		{"plus pid", "shm2:" + testBootID + testNS + ":+4242:7:8:" + nonce},
		{"leading zero memfd", "shm2:" + testBootID + testNS + ":4242:07:8:" + nonce},
		{"minus zero eventfd", "shm2:" + testBootID + testNS + ":4242:7:-0:" + nonce},
		{"uppercase nonce", "shm2:" + testBootID + testNS + ":4242:7:8:0123456789ABCDEF"},
		{"leading zero PID namespace", "shm2:" + testBootID + ":04026531836:4242:7:8:" + nonce},
		{"plus PID namespace", "shm2:" + testBootID + ":+4026531836:4242:7:8:" + nonce},
	} {
		if a, err := ParseAddr(tc.addr); err == nil {
			t.Errorf("%s: ParseAddr(%q) = %+v, which String writes as %q; want an error", tc.name, tc.addr, a, a.String())
		}
	}
}
