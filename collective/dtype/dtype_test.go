package dtype

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseNamesEveryType(t *testing.T) {
	for _, dt := range All() {
		got, err := Parse(dt.String())
		require.NoError(t, err)
		require.Equal(t, dt, got)
		require.True(t, dt.Valid())
		require.Contains(t, []int{1, 2, 4, 8}, dt.Size(), dt.String())
	}
	for s, want := range map[string]DataType{"float": Float32, "double": Float64, "bf16": BFloat16Type,
		"half": Float16Type, "int": Int32, "u64": Uint64, "f8e4m3": Float8E4M3Type, "fp8e5m2": Float8E5M2Type,
		"float8e4m3": Float8E4M3Type, "e5m2": Float8E5M2Type} {
		got, err := Parse(s)
		require.NoError(t, err)
		require.Equal(t, want, got, s)
	}
	_, err := Parse("complex64")
	require.ErrorContains(t, err, `"complex64"`)
	require.False(t, Invalid.Valid())
	require.Equal(t, 0, DataType(200).Size())
	require.Equal(t, "dtype(200)", DataType(200).String())
}

func TestOf(t *testing.T) {
	require.Equal(t, Float32, Of[float32]())
	require.Equal(t, BFloat16Type, Of[BFloat16]())
	require.Equal(t, Float16Type, Of[Float16]())
	require.Equal(t, Uint64, Of[uint64]())
	require.Equal(t, Int8, Of[int8]())
	require.Equal(t, Uint8, Of[uint8]())
	require.Equal(t, Float8E4M3Type, Of[Float8E4M3]())
	require.Equal(t, Float8E5M2Type, Of[Float8E5M2]())
	require.True(t, Float8E4M3Type.IsFloat() && Float8E5M2Type.IsFloat())
	require.Equal(t, 1, Float8E5M2Type.Size())
}

// FuzzParse checks that Parse never panics and that what it accepts is a
// valid type whose own name parses back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"float32", "bf16", "half", "u8", "", "invalid", "dtype(3)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dt, err := Parse(s)
		if err != nil {
			require.Equal(t, Invalid, dt)
			return
		}
		require.True(t, dt.Valid(), s)
		back, err := Parse(dt.String())
		require.NoError(t, err)
		require.Equal(t, dt, back)
	})
}
