package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// Known values of CRC-32C (RFC 3720, B.4, and the usual check value).
func TestVectors(t *testing.T) {
	ones := make([]byte, 32)
	for i := range ones {
		ones[i] = 0xff
	}
	inc := make([]byte, 32)
	for i := range inc {
		inc[i] = byte(i)
	}
	for _, c := range []struct {
		in   []byte
		want uint32
	}{
		{[]byte("123456789"), 0xe3069283},
		{make([]byte, 32), 0x8a9136aa},
		{ones, 0x62a8ab43},
		{inc, 0x46dd794e},
	} {
		if got := Checksum(c.in); got != c.want {
			t.Errorf("Checksum(% x) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

// Update agrees with hash/crc32 on every length around the folding's
// boundaries, at every alignment, from several starting CRCs.
func TestAgreesWithStdlib(t *testing.T) {
	if !useFold {
		t.Log("no folding on this processor: Update is hash/crc32's")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 4*foldBlock+64)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for n := 0; n <= 4*foldBlock; n++ {
		for _, off := range []int{0, 1, 7, 63} {
			for _, crc := range []uint32{0, 0xffffffff, rng.Uint32()} {
				p := buf[off : off+n]
				if got, want := Update(crc, p), crc32.Update(crc, table, p); got != want {
					t.Fatalf("Update(%#x, %d bytes at +%d) = %#x, want %#x", crc, n, off, got, want)
				}
			}
		}
	}
}

// Long inputs, random lengths up to a jumbo datagram and beyond.
func TestAgreesWithStdlibLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 70000)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for range 2000 {
		off := rng.IntN(64)
		n := rng.IntN(len(buf) - off)
		crc := rng.Uint32()
		p := buf[off : off+n]
		if got, want := Update(crc, p), crc32.Update(crc, table, p); got != want {
			t.Fatalf("Update(%#x, %d bytes at +%d) = %#x, want %#x", crc, n, off, got, want)
		}
	}
}

// A single flipped bit anywhere in a folded input changes the CRC (as it
// must for any CRC; a wrong multiplier would lose some positions).
func TestBitFlips(t *testing.T) {
	p := make([]byte, 9000)
	for i := range p {
		p[i] = byte(i * 7)
	}
	base := Checksum(p)
	for i := range len(p) * 8 {
		p[i/8] ^= 1 << (i % 8)
		if Checksum(p) == base {
			t.Fatalf("flipping bit %d leaves the CRC", i)
		}
		p[i/8] ^= 1 << (i % 8)
	}
}

func FuzzUpdate(f *testing.F) {
	f.Add(uint32(0), make([]byte, 600))
	f.Add(uint32(0xdeadbeef), make([]byte, 1031))
	f.Fuzz(func(t *testing.T, crc uint32, p []byte) {
		if got, want := Update(crc, p), crc32.Update(crc, table, p); got != want {
			t.Fatalf("Update(%#x, %d bytes) = %#x, want %#x", crc, len(p), got, want)
		}
	})
}

// Update allocates nothing, folded or not (a datagram's CRC is on every
// packet's path).
func TestNoAllocations(t *testing.T) {
	p := make([]byte, 9000)
	for _, n := range []int{100, foldMin, 9000} {
		if a := testing.AllocsPerRun(100, func() { sink += Update(1, p[:n]) }); a != 0 {
			t.Errorf("Update of %d bytes: %v allocations", n, a)
		}
	}
}

var sink uint32
