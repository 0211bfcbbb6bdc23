package launcher

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

// The job key reaches MetaRoCE and TCP: GOCOLL_AUTH and GOCOLL_ENCRYPT
// pick each MetaRoCE connection's mode (sites: encrypted between the
// sites of rankEnv, ranks 0-1 at a and 2 at b), and the worlds reduce
// exactly.
func TestWorldTransportAuth(t *testing.T) {
	header, full, encrypt := metaroce.AuthHeader, metaroce.AuthFull, metaroce.AuthEncrypt
	for _, tc := range []struct {
		name  string
		env   []string
		modes [2]metaroce.AuthMode // rank 0's connection to rank 1, to rank 2
	}{
		{"default", nil, [2]metaroce.AuthMode{header, header}},
		{"full", []string{EnvAuth + "=full"}, [2]metaroce.AuthMode{full, full}},
		{"encrypt sites", []string{EnvEncrypt + "=sites"}, [2]metaroce.AuthMode{header, encrypt}},
		{"encrypt all", []string{EnvEncrypt + "=all"}, [2]metaroce.AuthMode{encrypt, encrypt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := testStore(t)
			const n = 3
			worlds := joinAllOK(t, n, func(r int) []string {
				return rankEnv(t, addr, r, n, append([]string{EnvTransport + "=" + TransportMetaRoCE}, tc.env...)...)
			})
			sumRanks(t, worlds)
			ep := worlds[0].life.guard.inner.(*mrtransport.Endpoint)
			for _, p := range ep.Stats().Peers {
				require.Equal(t, tc.modes[p.Rank-1], p.Conn.Auth, "rank 0's connection to rank %d", p.Rank)
			}
		})
	}
	for _, env := range []string{EnvAuth + "=header", EnvAuth + "=full", EnvEncrypt + "=sites", EnvEncrypt + "=all"} {
		t.Run("tcp "+env, func(t *testing.T) {
			addr := testStore(t)
			const n = 3
			worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvTransport+"="+TransportTCP, env) })
			sumRanks(t, worlds)
			require.Zero(t, transport.StatsOf(worlds[1].life.guard.inner).AuthDropped)
		})
	}
}
