package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"8", "64K", "1m", "32M", "1G", "2GiB", "1KB", "0", "1Q", "", "-1", "64G", "65G",
		"99999999999999999999", "1.5M", "0x10", " 8", "8 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			require.Zero(t, n)
			require.NotContains(t, err.Error(), "\n")
			require.Less(t, len(err.Error()), 200)
			return
		}
		require.GreaterOrEqual(t, n, int64(0))
		require.LessOrEqual(t, n, int64(SizeMax))
		back, err := ParseSize(FormatSize(n))
		require.NoError(t, err)
		require.Equal(t, n, back)
	})
}

// FuzzParseArgs feeds command lines (arguments separated by NUL bytes):
// ParseArgs never panics, its errors fit on one line, and what it accepts
// stays within the documented limits.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"allreduce\x00-b\x008\x00-e\x00128M\x00-f\x002",
		"all\x00-b8\x00-e=1G\x00-f\x004\x00-n\x005\x00-w\x000\x00-c\x000",
		"broadcast,reduce\x00-r\x001\x00-np\x002\x00--algo\x00chain",
		"alltoall\x00--sizes\x008,1K,64K\x00--format\x00peers\x00--label\x00x",
		"sendrecv\x00--json\x00--transport=inproc\x00--in-process\x00-d\x00bf16\x00-o\x00avg",
		"reducescatter\x00--minbytes\x001K\x00--maxbytes\x001M\x00--stepbytes\x0064K\x00--timeout\x0030s",
		"-h", "allreduce\x00-b\x001Q", "allreduce\x00--\x00-b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		o, err := ParseArgs(strings.Split(joined, "\x00"))
		if err != nil {
			if !errors.Is(err, ErrHelp) {
				require.NotContains(t, err.Error(), "\n")
				require.Less(t, len(err.Error()), 400)
			}
			return
		}
		sizes := o.sweep()
		require.NotEmpty(t, sizes)
		require.LessOrEqual(t, len(sizes), SizesMax)
		for i, s := range sizes {
			require.GreaterOrEqual(t, s, int64(0))
			require.LessOrEqual(t, s, int64(SizeMax))
			if i > 0 {
				require.Greater(t, s, sizes[i-1])
			}
		}
		require.NotEmpty(t, o.Colls)
		require.GreaterOrEqual(t, o.Iters, 1)
		require.GreaterOrEqual(t, o.Warmup, 0)
		require.True(t, o.Ranks >= 0 && o.Ranks <= RanksMax && o.localRanks() >= 1)
		require.True(t, o.DataType.Valid() && o.Op.Valid())
		require.Positive(t, o.Timeout)
	})
}
