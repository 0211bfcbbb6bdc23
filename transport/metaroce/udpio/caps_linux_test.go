package udpio

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCaps reports what this machine's kernel grants and checks what Linux
// must grant: batching, ECN, and with root the exact buffer sizes (forced
// past rmem_max/wmem_max).
func TestCaps(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want int
	}{
		{"defaults", Config{}, DefaultSocketBuffer},
		{"1 MiB", Config{ReadBuffer: 1 << 20, WriteBuffer: 1 << 20}, 1 << 20},
		{"32 MiB", Config{ReadBuffer: 32 << 20, WriteBuffer: 32 << 20}, 32 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := listen(t, loopback4, tt.cfg)
			c := s.Caps()
			t.Logf("caps %+v (euid %d)", c, os.Geteuid())
			require.True(t, c.Batch)
			require.True(t, c.ECN)
			require.Positive(t, c.ReadBuffer)
			require.Positive(t, c.WriteBuffer)
			require.LessOrEqual(t, c.ReadBuffer, tt.want)
			if os.Geteuid() == 0 {
				require.Equal(t, tt.want, c.ReadBuffer)
				require.Equal(t, tt.want, c.WriteBuffer)
			}
		})
	}
	t.Run("offloads disabled", func(t *testing.T) {
		s := listen(t, loopback4, Config{DisableGSO: true, DisableGRO: true, DisableECN: true})
		c := s.Caps()
		require.False(t, c.GSO)
		require.False(t, c.GRO)
		require.False(t, c.ECN)
	})
}
