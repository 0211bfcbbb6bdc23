package reduce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/stretchr/testify/require"
)

var testLengths = []int{0, 1, 7, 1023, 65539}

// aliasing is how a test lays out dst, a and b.
type aliasing int

const (
	separate aliasing = iota // three distinct buffers
	dstIsA                   // dst == a: a = a op b
	dstIsB                   // dst == b: b = a op b
	allSame                  // dst == a == b
)

func (m aliasing) String() string { return [...]string{"separate", "dst=a", "dst=b", "all-same"}[m] }

// run applies kernel k to copies of a and b laid out as m and returns dst.
func run(k Kernel, m aliasing, a, b []byte) []byte {
	a, b = clone(a), clone(b)
	switch m {
	case dstIsA:
		k(a, a, b)
		return a
	case dstIsB:
		k(b, a, b)
		return b
	case allSame:
		k(a, a, a)
		return a
	}
	dst := make([]byte, len(a))
	k(dst, a, b)
	return dst
}

func clone(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

// TestKernelsMatchReference checks every data type × op × length × aliasing
// layout against the element-by-element reference on random data.
func TestKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, dt := range dtype.All() {
		for _, op := range Ops() {
			k, err := Lookup(dt, op)
			require.NoError(t, err)
			for _, n := range testLengths {
				a, b := randomPair(rng, dt, n)
				wantAB, wantAA := reference(dt, op, a, b), reference(dt, op, a, a)
				for _, m := range []aliasing{separate, dstIsA, dstIsB, allSame} {
					want := wantAB
					if m == allSame {
						want = wantAA
					}
					what := fmt.Sprintf("%v %v n=%d %v", dt, op, n, m)
					requireSameElements(t, dt, what, run(k, m, a, b), want)
				}
			}
		}
	}
}

// TestMisalignedBuffers checks the path for buffers not aligned to the
// element size, in and out of place, against the aligned path.
func TestMisalignedBuffers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, dt := range dtype.All() {
		for _, op := range []Op{Sum, Prod, Min, Max} {
			k, err := Lookup(dt, op)
			require.NoError(t, err)
			n := 3000 // several scratch chunks
			a, b := randomPair(rng, dt, n)
			want := reference(dt, op, a, b)
			size := len(a)
			ma := make([]byte, size+1)[1:]
			mb := make([]byte, size+3)[3:]
			copy(ma, a)
			copy(mb, b)
			dst := make([]byte, size+5)[5:]
			k(dst, ma, mb)
			requireSameElements(t, dt, fmt.Sprintf("%v %v misaligned", dt, op), dst, want)
			k(ma, ma, mb)
			requireSameElements(t, dt, fmt.Sprintf("%v %v misaligned in place", dt, op), ma, want)
		}
	}
}

// TestActiveMatchesPortable checks the kernels Lookup returns (which an
// architecture-specific file may have replaced) against the portable ones.
func TestActiveMatchesPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	for _, dt := range dtype.All() {
		for _, op := range Ops() {
			fast, err := Lookup(dt, op)
			require.NoError(t, err)
			slow, err := Portable(dt, op)
			require.NoError(t, err)
			// 16, 32 and 128 elements fill whole 128-byte vector rounds
			// for 8, 4 and 1-byte types; the others leave tails.
			for _, n := range []int{1, 15, 16, 17, 32, 33, 128, 4099} {
				a, b := randomPair(rng, dt, n)
				for _, m := range []aliasing{separate, dstIsA, dstIsB, allSame} {
					want := run(slow, separate, a, b)
					if m == allSame { // a op a
						want = run(slow, allSame, a, b)
					}
					requireSameElements(t, dt, fmt.Sprintf("%v %v n=%d %v", dt, op, n, m), run(fast, m, a, b), want)
				}
			}
		}
	}
}

func TestAvgReducesLikeSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, dt := range dtype.All() {
		avg, err := Lookup(dt, Avg)
		require.NoError(t, err)
		a, b := randomPair(rng, dt, 100)
		requireSameElements(t, dt, dt.String(), run(avg, separate, a, b), reference(dt, Sum, a, b))
	}
}

func TestLookupRejectsInvalid(t *testing.T) {
	for _, tc := range []struct {
		dt   dtype.DataType
		op   Op
		want string
	}{
		{dtype.Invalid, Sum, "data type invalid, op sum"},
		{dtype.DataType(99), Max, "data type dtype(99), op max"},
		{dtype.Float32, InvalidOp, "data type float32, op invalid"},
		{dtype.Int8, Op(42), "data type int8, op op(42)"},
	} {
		for _, get := range []func(dtype.DataType, Op) (Kernel, error){Lookup, Portable} {
			k, err := get(tc.dt, tc.op)
			require.Nil(t, k)
			require.ErrorIs(t, err, ErrUnsupported)
			require.ErrorContains(t, err, tc.want)
		}
	}
}

// TestKernelPanicsOnBadLengths checks that a kernel called against its
// contract fails loudly instead of reducing part of the data.
func TestKernelPanicsOnBadLengths(t *testing.T) {
	k, err := Lookup(dtype.Float32, Sum)
	require.NoError(t, err)
	require.PanicsWithValue(t, "reduce: kernel called with len(dst)=8, len(a)=8, len(b)=4, element size 4",
		func() { k(make([]byte, 8), make([]byte, 8), make([]byte, 4)) })
	require.Panics(t, func() { k(make([]byte, 6), make([]byte, 6), make([]byte, 6)) })
}

// TestOverrideReplacesActiveOnly checks the seam for accelerated kernels:
// an override changes what Lookup returns (for Avg too) but not Portable,
// and bad overrides are refused.
func TestOverrideReplacesActiveOnly(t *testing.T) {
	saved := active
	defer func() { active = saved }()
	calls := 0
	override(dtype.Float32, Sum, func(dst, a, b []byte) { calls++ })
	for _, op := range []Op{Sum, Avg} {
		k, err := Lookup(dtype.Float32, op)
		require.NoError(t, err)
		k(nil, nil, nil)
	}
	require.Equal(t, 2, calls)
	p, err := Portable(dtype.Float32, Sum)
	require.NoError(t, err)
	a := float32Bytes(1.5)
	p(a, a, a)
	require.Equal(t, float32Bytes(3), a)
	require.Equal(t, 2, calls)
	require.Panics(t, func() { override(dtype.Float32, Avg, p) })
	require.Panics(t, func() { override(dtype.Invalid, Sum, p) })
	require.Panics(t, func() { override(dtype.Int8, Max, nil) })
}

func float32Bytes(v float32) []byte {
	b := make([]byte, 4)
	le.PutUint32(b, math.Float32bits(v))
	return b
}
