package launcher

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzEnvDurations feeds arbitrary text to every duration variable: a
// value is accepted only within the variable's documented bounds, and any
// other is refused in one line that names the variable.
func FuzzEnvDurations(f *testing.F) {
	for _, v := range []string{"30s", "1.5", "0", "-1", "1e300", "NaN", "Inf", "1h0m", "250ms", "1e-9", "0x10", " 2s ", "9223372036s", "86400", "86400.0001"} {
		f.Add(uint8(0), v)
	}
	f.Fuzz(func(t *testing.T, which uint8, v string) {
		vars := []struct {
			name   string
			lo, hi time.Duration
			get    func(Job) time.Duration
		}{
			{EnvHeartbeatTimeout, MinHeartbeatTimeout, MaxTimeout, func(j Job) time.Duration { return j.HeartbeatTimeout }},
			{EnvConnectTimeout, time.Millisecond, MaxTimeout, func(j Job) time.Duration { return j.ConnectTimeout }},
			{EnvPeerTimeout, MinPeerTimeout, MaxPeerTimeout, func(j Job) time.Duration { return j.PeerTimeout }},
			{EnvUDPProbeTimeout, MinUDPProbeTimeout, MaxUDPProbeTimeout, func(j Job) time.Duration { return j.UDPProbeTimeout }},
			{EnvTimeout, time.Millisecond, MaxTimeout, func(j Job) time.Duration { return j.OpTimeout }},
			{EnvStallTimeout, time.Millisecond, MaxTimeout, func(j Job) time.Duration { return j.StallTimeout }},
		}
		d := vars[int(which)%len(vars)]
		j, err := ParseEnv(envOf(EnvRank+"=0", EnvWorldSize+"=1", EnvInsecure+"=1", d.name+"="+v))
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			require.Contains(t, err.Error(), d.name)
			return
		}
		got := d.get(j)
		if strings.TrimSpace(v) == "" {
			return // unset: the default
		}
		require.True(t, got >= d.lo && got <= d.hi, "%s=%q gave %v, outside [%v, %v]", d.name, v, got, d.lo, d.hi)
	})
}

// FuzzReadKeyLine: reading the job key from stdin never panics, never
// reads past the first newline, never returns more than MaxJobKeyBytes,
// and its errors are one line.
func FuzzReadKeyLine(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123\nrest"))
	f.Add([]byte("no newline at all"))
	f.Add(bytes.Repeat([]byte("k"), MaxJobKeyBytes+5))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		line, err := readKeyLine(r)
		nl := bytes.IndexByte(in, '\n')
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		require.GreaterOrEqual(t, nl, 0)
		require.Equal(t, string(in[:nl]), line)
		require.LessOrEqual(t, len(line), MaxJobKeyBytes)
		require.Equal(t, len(in)-nl-1, r.Len(), "read past the line")
	})
}
