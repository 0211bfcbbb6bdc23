package collective

import (
	"slices"
	"testing"
)

// FuzzDecodeRanks: rank lists read from the store never panic; what is
// accepted is distinct ranks in range, sorted, and encodes back to an
// equal list.
func FuzzDecodeRanks(f *testing.F) {
	for _, s := range []string{"", "0", "1,3", "3,1", "1,1", "-1", "01", "7", "1,,2", "2147483648", "a"} {
		f.Add([]byte(s), 4)
	}
	f.Fuzz(func(t *testing.T, b []byte, size int) {
		if size < 1 || size > 1<<20 {
			return
		}
		out, err := decodeRanks(b, size)
		if err != nil {
			return
		}
		if !slices.IsSorted(out) || len(slices.Compact(slices.Clone(out))) != len(out) {
			t.Fatalf("decodeRanks(%q) = %v: not sorted and distinct", b, out)
		}
		for _, r := range out {
			if r < 0 || r >= size {
				t.Fatalf("decodeRanks(%q, %d) = %v: out of range", b, size, out)
			}
		}
		again, err := decodeRanks(encodeRanks(out), size)
		if err != nil || !slices.Equal(again, out) {
			t.Fatalf("round trip of %v: %v, %v", out, again, err)
		}
	})
}

func TestParseAbortRank(t *testing.T) {
	for _, c := range []struct {
		text, id string
		rank     int
		ok       bool
	}{
		{"rank 1 failed: communicator 0x1 aborted by rank 3", "0x1", 3, true},
		{"communicator 0x2 aborted by rank 3", "0x1", 0, false},
		{"communicator 0x2 aborted by rank 3; communicator 0x1 aborted by rank 12: x", "0x1", 12, true},
		{"aborted by rank x", "", 0, false},
		{"nothing", "", 0, false},
	} {
		r, ok := parseAbortRank(c.text, c.id)
		if r != c.rank || ok != c.ok {
			t.Errorf("parseAbortRank(%q, %q) = %d, %v; want %d, %v", c.text, c.id, r, ok, c.rank, c.ok)
		}
	}
}
