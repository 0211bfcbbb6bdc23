package reduce

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gocoll/gocoll/collective/dtype"
)

// Kernel computes dst[i] = a[i] op b[i] for every element of one data type,
// on little-endian raw bytes. dst, a and b must have equal lengths, a
// multiple of the element size; dst must be exactly a, exactly b, or overlap
// neither (a and b may overlap each other). A Kernel panics on unequal or
// non-multiple lengths and gives unspecified results on other overlaps; use
// [Apply] for buffers not already checked. Kernels keep no state and are
// safe for concurrent use on disjoint destinations.
type Kernel func(dst, a, b []byte)

// Errors returned by this package, wrapped with details. Test with errors.Is.
var (
	// ErrUnsupported: the data type or the operation is not valid.
	ErrUnsupported = errors.New("reduce: unsupported data type or operation")
	// ErrLength: buffer lengths differ or are not a multiple of the
	// element size.
	ErrLength = errors.New("reduce: bad buffer length")
	// ErrOverlap: dst partly overlaps a or b.
	ErrOverlap = errors.New("reduce: dst partly overlaps an input")
	// ErrDivisor: DivideBy's divisor is not positive.
	ErrDivisor = errors.New("reduce: divisor must be positive")
)

// maxTypes bounds the DataType values the kernel tables index.
const maxTypes = 16

// table holds one kernel per (data type, op); entries for invalid types
// and ops are nil, and Avg is not stored (it uses Sum's kernel).
type table [maxTypes][numOps]Kernel

var (
	// portable holds the pure-Go kernels; it never changes after init.
	portable = buildPortable()
	// active holds the kernels Lookup returns: the portable ones, some of
	// which architecture-specific init functions replace via override.
	active = portable
	// level names the instruction set of the active kernels.
	level = "portable"
)

// KernelLevel names the instruction set the kernels Lookup returns use,
// chosen at start-up from the CPU's features: "avx512fp16" (AVX-512 with
// its FP16 extension), "avx512gfni" (AVX-512 with GFNI), "avx512" or
// "avx2" on amd64,
// "neon" on arm64 (data types and operations without a vector kernel stay
// portable), else
// "portable" (pure Go, as with the purego build tag).
func KernelLevel() string { return level }

// override makes k the active kernel for (t, op). It is the seam for
// architecture-specific (SIMD) kernels and must be called only from an init
// function; k must give the same results as Portable(t, op) (any NaN may
// stand for another).
func override(t dtype.DataType, op Op, k Kernel) {
	if !t.Valid() || int(t) >= maxTypes || !op.Valid() || op == Avg || k == nil {
		panic(fmt.Sprintf("reduce: bad kernel override for %v %v", t, op))
	}
	active[t][op] = k
}

func buildPortable() table {
	var tab table
	tab[dtype.Float32], tab[dtype.Float64] = floatKernels()
	tab[dtype.Int8] = numberKernels[int8]()
	tab[dtype.Uint8] = numberKernels[uint8]()
	tab[dtype.Int32] = numberKernels[int32]()
	tab[dtype.Uint32] = numberKernels[uint32]()
	tab[dtype.Int64] = numberKernels[int64]()
	tab[dtype.Uint64] = numberKernels[uint64]()
	tab[dtype.Int8][Sum] = typed(sumBytes)
	tab[dtype.Uint8][Sum] = typed(sumBytes)
	tab[dtype.Int8][Min], tab[dtype.Int8][Max] = typed(minSmall[int8]), typed(maxSmall[int8])
	tab[dtype.Uint8][Min], tab[dtype.Uint8][Max] = typed(minSmall[uint8]), typed(maxSmall[uint8])
	tab[dtype.BFloat16Type] = bfloat16Kernels()
	tab[dtype.Float16Type] = float16Kernels()
	tab[dtype.Float8E4M3Type] = float8E4M3Kernels()
	tab[dtype.Float8E5M2Type] = float8E5M2Kernels()
	for _, t := range dtype.All() {
		if int(t) >= maxTypes {
			panic(fmt.Sprintf("reduce: data type %v beyond the kernel table", t))
		}
		for _, op := range []Op{Sum, Prod, Min, Max} {
			if tab[t][op] == nil {
				panic(fmt.Sprintf("reduce: no portable kernel for %v %v", t, op))
			}
		}
	}
	return tab
}

// Lookup returns the fastest kernel for data type t and operation op. Avg
// returns the Sum kernel (finish with DivideBy). It fails with an error
// wrapping ErrUnsupported, naming t and op, if either is invalid.
func Lookup(t dtype.DataType, op Op) (Kernel, error) { return lookup(&active, t, op) }

// Portable returns the pure-Go kernel for t and op, the reference every
// accelerated kernel must match. Errors are as for Lookup.
func Portable(t dtype.DataType, op Op) (Kernel, error) { return lookup(&portable, t, op) }

func lookup(tab *table, t dtype.DataType, op Op) (Kernel, error) {
	if !t.Valid() || int(t) >= maxTypes || !op.Valid() {
		return nil, fmt.Errorf("%w: no kernel for data type %v, op %v", ErrUnsupported, t, op)
	}
	if op == Avg {
		op = Sum
	}
	return tab[t][op], nil
}

// Apply computes dst[i] = a[i] op b[i] over data type t like the kernel
// Lookup returns, after checking the arguments: it returns an error instead
// of panicking if t or op is invalid (ErrUnsupported), if the lengths differ
// or are not a multiple of t's size (ErrLength), or if dst partly overlaps
// a or b (ErrOverlap; dst may be exactly a or b). Avg computes the sum.
func Apply(t dtype.DataType, op Op, dst, a, b []byte) error {
	k, err := Lookup(t, op)
	if err != nil {
		return err
	}
	if len(a) != len(dst) || len(b) != len(dst) {
		return fmt.Errorf("%w: %v %v: len(dst)=%d, len(a)=%d, len(b)=%d",
			ErrLength, t, op, len(dst), len(a), len(b))
	}
	if len(dst)%t.Size() != 0 {
		return fmt.Errorf("%w: %v %v: %d bytes is not a whole number of %d-byte elements",
			ErrLength, t, op, len(dst), t.Size())
	}
	if overlapsPartly(dst, a) || overlapsPartly(dst, b) {
		return fmt.Errorf("%w: %v %v", ErrOverlap, t, op)
	}
	k(dst, a, b)
	return nil
}

// overlapsPartly reports whether x and y share memory without being the
// same slice start.
func overlapsPartly(x, y []byte) bool {
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	px := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	py := uintptr(unsafe.Pointer(unsafe.SliceData(y)))
	return px != py && px < py+uintptr(len(y)) && py < px+uintptr(len(x))
}
