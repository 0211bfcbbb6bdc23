package reduce

import (
	"math/rand/v2"
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/stretchr/testify/require"
)

func TestApplyRejectsBadArguments(t *testing.T) {
	buf := make([]byte, 64)
	for _, tc := range []struct {
		name       string
		dt         dtype.DataType
		op         Op
		dst, a, b  []byte
		is         error
		errMessage string
	}{
		{"invalid type", dtype.Invalid, Sum, buf[:8], buf[8:16], buf[16:24], ErrUnsupported, "data type invalid"},
		{"invalid op", dtype.Float32, Op(9), buf[:8], buf[8:16], buf[16:24], ErrUnsupported, "op op(9)"},
		{"short a", dtype.Float32, Sum, buf[:8], buf[8:12], buf[16:24], ErrLength, "len(a)=4"},
		{"long b", dtype.Float32, Max, buf[:8], buf[8:16], buf[16:28], ErrLength, "len(b)=12"},
		{"odd float32 length", dtype.Float32, Sum, buf[:6], buf[8:14], buf[16:22], ErrLength, "6 bytes"},
		{"odd float64 length", dtype.Float64, Prod, buf[:12], buf[16:28], buf[32:44], ErrLength, "8-byte elements"},
		{"odd bf16 length", dtype.BFloat16Type, Min, buf[:3], buf[8:11], buf[16:19], ErrLength, "3 bytes"},
		{"dst overlaps a", dtype.Int32, Sum, buf[4:12], buf[0:8], buf[16:24], ErrOverlap, "int32 sum"},
		{"a overlaps dst end", dtype.Int32, Sum, buf[0:8], buf[4:12], buf[16:24], ErrOverlap, "dst partly overlaps"},
		{"dst overlaps b", dtype.Uint8, Min, buf[0:8], buf[16:24], buf[7:15], ErrOverlap, "uint8 min"},
	} {
		err := Apply(tc.dt, tc.op, tc.dst, tc.a, tc.b)
		require.ErrorIs(t, err, tc.is, tc.name)
		require.ErrorContains(t, err, tc.errMessage, tc.name)
	}
}

func TestApplyAllowsExactAliasing(t *testing.T) {
	a := []byte{1, 2, 3, 4}
	b := []byte{10, 20, 30, 40}
	require.NoError(t, Apply(dtype.Uint8, Sum, a, a, b))
	require.Equal(t, []byte{11, 22, 33, 44}, a)
	require.NoError(t, Apply(dtype.Uint8, Max, b, a, b))
	require.Equal(t, []byte{11, 22, 33, 44}, b)
	require.NoError(t, Apply(dtype.Uint8, Sum, a[:2], a[:2], a[2:])) // a and b disjoint halves of one buffer
	require.Equal(t, []byte{44, 66, 33, 44}, a)
	require.NoError(t, Apply(dtype.Float64, Avg, nil, nil, nil))
}

// FuzzApply reduces fuzzed bytes with every type and op and checks Apply
// against the reference: it must never panic, and must either reject the
// input with an error or compute the reference result.
func FuzzApply(f *testing.F) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, dt := range dtype.All() {
		a, b := randomPair(rng, dt, 9)
		f.Add(uint8(dt), uint8(Sum), a, b)
	}
	f.Add(uint8(0), uint8(Sum), []byte{1}, []byte{2})
	f.Add(uint8(dtype.Float32), uint8(Avg), []byte{1, 2, 3}, []byte{4, 5, 6})
	f.Fuzz(func(t *testing.T, typ, op uint8, a, b []byte) {
		dt := dtype.DataType(typ)
		n := min(len(a), len(b))
		dst := make([]byte, n)
		err := Apply(dt, Op(op), dst, a[:n], b[:n])
		if !dt.Valid() || !Op(op).Valid() || n%dt.Size() != 0 {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		requireSameElements(t, dt, dt.String()+" "+Op(op).String(), dst, reference(dt, Op(op), a[:n], b[:n]))
	})
}

// FuzzParseOp checks that ParseOp never panics and that what it accepts is
// a valid op whose name parses back to it.
func FuzzParseOp(f *testing.F) {
	for _, s := range []string{"sum", "prod", "min", "max", "avg", "", "invalid", "op(3)", "SUM"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		op, err := ParseOp(s)
		if err != nil {
			require.Equal(t, InvalidOp, op)
			require.ErrorContains(t, err, "unknown operation")
			return
		}
		require.True(t, op.Valid(), s)
		back, err := ParseOp(op.String())
		require.NoError(t, err)
		require.Equal(t, op, back)
	})
}
