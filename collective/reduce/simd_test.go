//go:build (amd64 || arm64) && !purego

package reduce

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
)

var kernelLevel = flag.String("kernel-level", "", "BenchmarkKernel: use this level's kernels (avx512fp16, avx512gfni, avx512, avx2, neon; default: the start-up choice)")

func init() {
	forceBenchLevel = func(b *testing.B) func() {
		saved, savedLevel := active, level
		restore := func() { active, level = saved, savedLevel }
		if *kernelLevel == "" {
			return restore
		}
		for _, l := range simdLevels() {
			if l.name == *kernelLevel {
				if !l.ok {
					b.Skipf("this CPU cannot run the %s kernels", l.name)
				}
				useLevel(l)
				return restore
			}
		}
		b.Fatalf("-kernel-level %q: no such level", *kernelLevel)
		return restore
	}
}

// withLevel runs f with l's kernels active and restores the start-up
// choice afterwards. Tests using it must not run in parallel.
func withLevel(t testing.TB, l simdLevel, f func()) {
	t.Helper()
	savedActive, savedLevel := active, level
	defer func() { active, level = savedActive, savedLevel }()
	useLevel(l)
	f()
}

// supportedLevels returns the levels this CPU runs; it skips the test,
// naming the level, for each one it cannot.
func supportedLevels(t *testing.T) []simdLevel {
	var ok []simdLevel
	for _, l := range simdLevels() {
		if l.ok {
			ok = append(ok, l)
		} else {
			t.Logf("this CPU lacks the %s kernels' instructions: not tested here", l.name)
		}
	}
	if len(ok) == 0 {
		t.Skip("this CPU runs none of the SIMD levels: only the portable kernels run")
	}
	return ok
}

// TestStartupLevelIsTheBest checks that init made the first level this
// CPU runs (simdLevels lists them best first) the active one.
func TestStartupLevelIsTheBest(t *testing.T) {
	for _, l := range simdLevels() {
		if l.ok {
			if KernelLevel() != l.name {
				t.Fatalf("KernelLevel() = %q at start-up, want %q", KernelLevel(), l.name)
			}
			return
		}
	}
	if KernelLevel() != "portable" {
		t.Fatalf("KernelLevel() = %q on a CPU without SIMD levels", KernelLevel())
	}
}

// TestLevelKernelsMatchPortableBits forces each supported level and
// compares every data type × op with the portable kernel bit for bit (NaN
// payloads and signs included), for lengths 0 to 300 elements, each of
// dst, a and b at byte offsets 0 to 3 from aligned, in place and not, on
// data full of NaNs, infinities, signed zeros and subnormals.
func TestLevelKernelsMatchPortableBits(t *testing.T) {
	for _, l := range supportedLevels(t) {
		withLevel(t, l, func() {
			require := func(b bool, format string, args ...any) {
				t.Helper()
				if !b {
					t.Fatalf("%s: "+format, append([]any{l.name}, args...)...)
				}
			}
			require(KernelLevel() == l.name, "KernelLevel() = %q", KernelLevel())
			rng := rand.New(rand.NewPCG(21, uint64(len(l.name))))
			for _, dt := range dtype.All() {
				for _, op := range Ops() {
					fast, _ := Lookup(dt, op)
					slow, _ := Portable(dt, op)
					for n := 0; n <= 300; n++ {
						a, b := randomPair(rng, dt, n)
						off := [3]int{n % 4, n / 4 % 4, n / 16 % 4}
						what := fmt.Sprintf("%v %v n=%d offsets %v", dt, op, n, off)
						got, want := runAt(fast, off, a, b), runAt(slow, off, a, b)
						require(bytes.Equal(got, want), "%s: got %x\nwant %x", what, got, want)
						gotIn, wantIn := clone(a), clone(a)
						fast(gotIn, gotIn, b)
						slow(wantIn, wantIn, b)
						require(bytes.Equal(gotIn, wantIn), "%s in place: got %x\nwant %x", what, gotIn, wantIn)
					}
				}
			}
		})
	}
}

// TestLevelKernelsLongLengths compares each level with the portable
// kernels bit for bit at lengths of 4 KiB and more, where the AVX-512
// kernels run two or four streams ([0, L), [L, 2L), ... in one loop, the
// rest in order; asmgen's streamLoop): lengths around the 1 KiB steps of
// L, with dst a separate buffer, exactly a and exactly b.
func TestLevelKernelsLongLengths(t *testing.T) {
	sizes := []int{4096 - 256, 4096, 4096 + 256, 6144, 8192 - 256, 8192, 8192 + 256 + 8, 12288 + 768, 16384 + 1024 + 8, 65536 + 4096 + 2048 + 56}
	for _, l := range supportedLevels(t) {
		withLevel(t, l, func() {
			rng := rand.New(rand.NewPCG(19, uint64(len(l.name))))
			for _, dt := range dtype.All() {
				for _, op := range Ops() {
					fast, _ := Lookup(dt, op)
					slow, _ := Portable(dt, op)
					for _, bytesLen := range sizes {
						a, b := randomPair(rng, dt, bytesLen/dt.Size())
						what := fmt.Sprintf("%s %v %v %d bytes", l.name, dt, op, len(a))
						requireSameBytes(t, what, runAt(fast, [3]int{}, a, b), runAt(slow, [3]int{}, a, b))
						gotA, wantA := clone(a), clone(a)
						fast(gotA, gotA, b)
						slow(wantA, wantA, b)
						requireSameBytes(t, what+", dst = a", gotA, wantA)
						gotB, wantB := clone(b), clone(b)
						fast(gotB, a, gotB)
						slow(wantB, a, wantB)
						requireSameBytes(t, what+", dst = b", gotB, wantB)
					}
				}
			}
		})
	}
}

// TestLevelKernelsPrefetchLoop compares the kernels that prefetch (the
// 16-bit floats and fp8) with the portable ones at an input of 1 MiB and
// a little more: the AVX2 ones run a loop without prefetches below 1 MiB
// (asmgen's prefetchMin), which the other tests cover, and the loop with
// them from there. From 16 MiB (asmgen's streamMin) the AVX2 ones but the
// fp8 sums and products and the bfloat16 product run two streams, as do
// the int64 product and the uint64 Min and Max (Int64 and Uint64 are
// included here for those): at 16 MiB and a little more each
// kernel's result is compared with its own over 256 KiB pieces (the loop
// in order, checked here against the portable kernels), which is faster
// than the portable kernels. Under -short only the 1 MiB part runs.
func TestLevelKernelsPrefetchLoop(t *testing.T) {
	for _, l := range supportedLevels(t) {
		withLevel(t, l, func() {
			rng := rand.New(rand.NewPCG(23, uint64(len(l.name))))
			for _, dt := range []dtype.DataType{dtype.BFloat16Type, dtype.Float16Type, dtype.Float8E4M3Type, dtype.Float8E5M2Type, dtype.Int64, dtype.Uint64} {
				const bytesLen = 1<<20 + 128 + 8
				a, b := randomPair(rng, dt, bytesLen/dt.Size())
				for _, op := range Ops() {
					fast, _ := Lookup(dt, op)
					slow, _ := Portable(dt, op)
					what := fmt.Sprintf("%s %v %v %d bytes", l.name, dt, op, len(a))
					requireSameBytes(t, what, runAt(fast, [3]int{}, a, b), runAt(slow, [3]int{}, a, b))
				}
				if testing.Short() {
					// test.sh's race run: at 16 MiB the race detector's
					// checks on tiled's and the pieces' loops took 180 s
					// of the package's 240 in a lone -race -short run on
					// session 35's machine (317 s in CI), and the full
					// run covers the streams.
					continue
				}
				const streamLen = 16<<20 + 128 + 8
				a, b = tiled(a, streamLen), tiled(b, streamLen)
				for _, op := range []Op{Sum, Prod, Min, Max} {
					fast, _ := Lookup(dt, op)
					what := fmt.Sprintf("%s %v %v %d bytes against 256 KiB pieces", l.name, dt, op, len(a))
					requireSameBytes(t, what, runAt(fast, [3]int{}, a, b), runAt(inPieces(fast, 256<<10), [3]int{}, a, b))
				}
			}
		})
	}
}

// tiled returns n bytes of copies of x, each copy rotated 37 bytes further
// than the one before, so that no two stretches of a kernel's input far
// apart are the same.
func tiled(x []byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = x[(i+37*(i/len(x)))%len(x)]
	}
	return out
}

// inPieces returns k run over pieces of at most n bytes in turn.
func inPieces(k Kernel, n int) Kernel {
	return func(dst, a, b []byte) {
		for i := 0; i < len(dst); i += n {
			j := min(i+n, len(dst))
			k(dst[i:j], a[i:j], b[i:j])
		}
	}
}

// requireSameBytes fails t at the first byte where got and want differ,
// showing 16 bytes of each from there.
func requireSameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	for i := range got {
		if got[i] != want[i] {
			end := min(i+16, len(got))
			t.Fatalf("%s: byte %d of %d: got %x, want %x", what, i, len(got), got[i:end], want[i:end])
		}
	}
}

// TestLevelKernelsSpecialPairs runs each level over every pair of float
// special values (and their neighbours), so that each pair lands in a
// vector lane, not only in the portable tail.
func TestLevelKernelsSpecialPairs(t *testing.T) {
	for _, l := range supportedLevels(t) {
		withLevel(t, l, func() {
			for _, dt := range dtype.All() {
				if !dt.IsFloat() {
					continue
				}
				a, b := specialPairs(dt)
				for _, op := range Ops() {
					fast, _ := Lookup(dt, op)
					slow, _ := Portable(dt, op)
					got, want := runAt(fast, [3]int{}, a, b), runAt(slow, [3]int{}, a, b)
					if !bytes.Equal(got, want) {
						size := dt.Size()
						for i := 0; i < len(got); i += size {
							if !bytes.Equal(got[i:i+size], want[i:i+size]) {
								t.Errorf("%s %v %v: %x op %x = %x, want %x", l.name, dt, op,
									a[i:i+size], b[i:i+size], got[i:i+size], want[i:i+size])
								break
							}
						}
					}
				}
			}
		})
	}
}

// specialPairs returns a and b holding every ordered pair of the special
// bit patterns of dt (NaNs quiet and signaling of both signs, ±Inf, ±0,
// the smallest and largest subnormals and normals, ties), padded to a
// whole number of 256-byte blocks.
func specialPairs(dt dtype.DataType) (a, b []byte) {
	var pats []uint64
	switch dt {
	case dtype.Float32:
		pats = []uint64{0x7fc00000, 0xffc00001, 0x7f800001, 0xff800abc, 0x7f800000, 0xff800000, 0, 0x80000000,
			1, 0x80000001, 0x007fffff, 0x00800000, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff, 0x3f800001, 0x33800000}
	case dtype.Float64:
		pats = []uint64{0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001, 0xfff0000000000abc,
			0x7ff0000000000000, 0xfff0000000000000, 0, 1 << 63, 1, 1<<63 | 1, 0x000fffffffffffff,
			0x0010000000000000, 0x3ff0000000000000, 0xbff0000000000000, 0x7fefffffffffffff, 0x3ca0000000000000}
	case dtype.BFloat16Type:
		pats = []uint64{0x7fc0, 0xffc1, 0x7f81, 0xffbf, 0x7f80, 0xff80, 0, 0x8000, 1, 0x8001, 0x007f, 0x0080,
			0x3f80, 0xbf80, 0x7f7f, 0xff7f, 0x3f81, 0x3b80, 0x0081, 0x00ff}
	case dtype.Float16Type:
		pats = []uint64{0x7e00, 0xfe01, 0x7c01, 0xfdff, 0x7c00, 0xfc00, 0, 0x8000, 1, 0x8001, 0x03ff, 0x0400,
			0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x3c01, 0x1400, 0x0401, 0x7bfe}
	}
	size := dt.Size()
	n := len(pats) * len(pats)
	n = (n*size + 255) / 256 * 256 / size
	a, b = make([]byte, n*size), make([]byte, n*size)
	for i := range n {
		x, y := pats[i%len(pats)], pats[i/len(pats)%len(pats)]
		for j := range size {
			a[i*size+j], b[i*size+j] = byte(x>>(8*j)), byte(y>>(8*j))
		}
	}
	return a, b
}

// runAt copies a and b to buffers starting off[1] and off[2] bytes past
// an aligned address, runs k into a buffer starting off[0] past one, and
// returns the result.
func runAt(k Kernel, off [3]int, a, b []byte) []byte {
	at := func(o int, src []byte) []byte {
		buf := make([]byte, len(src)+o)[o:]
		copy(buf, src)
		return buf
	}
	dst := at(off[0], make([]byte, len(a)))
	k(dst, at(off[1], a), at(off[2], b))
	return dst
}

// FuzzLevelKernels compares every supported level with the portable
// kernels bit for bit on fuzzed bit patterns, lengths and offsets.
func FuzzLevelKernels(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), []byte("0123456789abcdef0123456789abcdef"))
	f.Add(uint8(9), uint8(3), uint8(1), uint8(2), uint8(3), bytes.Repeat([]byte{0x7f, 0xc0, 0x80, 0x01}, 300))
	f.Add(uint8(10), uint8(4), uint8(3), uint8(1), uint8(0), bytes.Repeat([]byte{0x00, 0x80, 0x01, 0x7c}, 700))
	var levels []simdLevel
	for _, l := range simdLevels() {
		if l.ok {
			levels = append(levels, l)
		}
	}
	f.Fuzz(func(t *testing.T, dtByte, opByte, o0, o1, o2 uint8, data []byte) {
		all := dtype.All()
		dt, op := all[int(dtByte)%len(all)], Ops()[int(opByte)%len(Ops())]
		size := dt.Size()
		n := len(data) / 2 / size * size
		a, b := data[:n], data[n:2*n]
		off := [3]int{int(o0 % 8), int(o1 % 8), int(o2 % 8)}
		slow, _ := Portable(dt, op)
		want := runAt(slow, off, a, b)
		for _, l := range levels {
			withLevel(t, l, func() {
				fast, _ := Lookup(dt, op)
				if got := runAt(fast, off, a, b); !bytes.Equal(got, want) {
					t.Fatalf("%s %v %v n=%d offsets %v: got %x\nwant %x", l.name, dt, op, n/size, off, got, want)
				}
			})
		}
	})
}
