package udpio

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNoAllocationsPerBatch: once warm, a WriteBatch and the ReadBatch
// calls that take its datagrams back allocate nothing, with and without
// GSO trains.
func TestNoAllocationsPerBatch(t *testing.T) {
	for _, tt := range []struct {
		name    string
		segment int
		cfg     Config
	}{
		{"single datagrams", 0, Config{}},
		{"GSO trains", 1000, Config{}},
		{"trains cut without GSO", 1000, Config{DisableGSO: true, DisableGRO: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rx := listen(t, loopback4, tt.cfg)
			tx := listen(t, loopback4, tt.cfg)
			ms := make([]Message, 32)
			datagrams := 0
			for i := range ms {
				size := 1000
				if tt.segment > 0 {
					size = 4 * tt.segment
				}
				ms[i] = Message{Buf: pattern(i, size), Addr: rx.LocalAddr(), Segment: tt.segment}
				datagrams += ms[i].Segments()
			}
			in := readBuffers(64, ReadBufferSize)
			require.NoError(t, rx.SetReadDeadline(time.Now().Add(30*time.Second)))
			allocs := testing.AllocsPerRun(50, func() { pingBatch(t, tx, rx, ms, in, datagrams) })
			require.Zero(t, allocs)
		})
	}
}
