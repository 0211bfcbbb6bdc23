package launcher

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// Over auto, rank 0's world reports rank 1 through shared memory and rank
// 2 through MetaRoCE, with its paths, and the close-time lines show both.
func TestWorldStats(t *testing.T) {
	if !shm.Supported {
		t.Skip("shared memory needs Linux")
	}
	addr := testStore(t)
	const n = 3
	worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvTransport+"="+TransportAuto) })
	sumRanks(t, worlds)
	s := worlds[0].Stats()
	require.Equal(t, 0, s.Rank)
	require.Len(t, s.Peers, 2, "%+v", s)
	near, far := s.Peers[0], s.Peers[1]
	require.Equal(t, transport.StatsSHM, near.Transport)
	require.Equal(t, transport.StatsMetaRoCE, far.Transport)
	for _, p := range s.Peers {
		require.True(t, p.Up, "%+v", p)
		require.Positive(t, p.MsgsSent+p.MsgsRecv, "peer %d: %+v", p.Rank, p)
	}
	require.NotEmpty(t, far.Paths)
	require.Equal(t, "shm=1 metaroce=2", transportsByPeer(s))

	var buf bytes.Buffer
	logStats(slog.New(slog.NewTextHandler(&buf, nil)), s)
	out := buf.String()
	used := 0
	for _, pa := range far.Paths {
		if pa.PacketsSent+pa.PacketsRecv > 0 || pa.State != "good" {
			used++
		}
	}
	require.Positive(t, used)
	require.Equal(t, 2+used, strings.Count(out, "\n"), out)
	require.Contains(t, out, `msg="gocoll: traffic" peer=1 transport=shm sent=`)
	require.Contains(t, out, "transport=metaroce")
	require.Contains(t, out, `msg="gocoll: path" peer=2 path=`)
}

func TestStatsText(t *testing.T) {
	require.Equal(t, "0,2-5,7", rankRanges([]int{5, 0, 3, 2, 4, 7}))
	require.Equal(t, "", rankRanges(nil))
	require.Equal(t, "1023B", sizeText(1023))
	require.Equal(t, "1.5KiB", sizeText(1536))
	require.Equal(t, "16.0MiB", sizeText(16<<20))
	require.Equal(t, "-", rateText(0))
	require.Equal(t, "800.0Mbit/s", rateText(100e6))
	s := transport.Stats{Peers: []transport.PeerStats{{Rank: 1, Transport: "shm"}, {Rank: 2, Transport: "tcp"}, {Rank: 3, Transport: "shm"}}}
	require.Equal(t, "shm=1,3 tcp=2", transportsByPeer(s))

	var buf bytes.Buffer // a logger above info prints nothing
	logStats(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})), s)
	require.Empty(t, buf.String())
}

func TestLogTransports(t *testing.T) {
	var buf bytes.Buffer
	s := transport.Stats{Peers: []transport.PeerStats{{Rank: 1, Transport: "shm"}, {Rank: 2, Transport: "metaroce"}}}
	logTransports(slog.New(slog.NewTextHandler(&buf, nil)), s, collective.Config{ChunkBytes: 2 << 20, SmallBytes: 64 << 10}, 0)
	require.Contains(t, buf.String(), `msg="gocoll: transport per peer" peers="shm=1 metaroce=2" chunk=2.0MiB small=64.0KiB`)
}

// A connection the peer closed first is a normal end on either transport
// (MetaRoCE wraps transport.ErrClosed with its reason): its traffic line
// carries no err; any other failure does.
func TestLogStatsQuietOnClose(t *testing.T) {
	peerClosed := (&transport.PeerError{Rank: 1, Err: fmt.Errorf("%w (%s)", transport.ErrClosed, "metaroce: connection closed by peer")}).Error()
	for _, tc := range []struct {
		err     string
		wantErr bool
	}{
		{transport.ErrClosed.Error(), false},
		{peerClosed, false},
		{"metaroce: the peer stopped answering: nothing heard on any of 8 paths for 2s", true},
	} {
		var buf bytes.Buffer
		s := transport.Stats{Rank: 0, Peers: []transport.PeerStats{{Rank: 1, Transport: transport.StatsMetaRoCE, Err: tc.err}}}
		logStats(slog.New(slog.NewTextHandler(&buf, nil)), s)
		if got := strings.Contains(buf.String(), "err="); got != tc.wantErr {
			t.Errorf("Err %q: err attribute logged = %v, want %v:\n%s", tc.err, got, tc.wantErr, buf.String())
		}
	}
}

// A MetaRoCE path's line carries its timeouts and, of them, the spurious
// ones (a sender starved of CPU, not a losing path).
func TestLogStatsPathTimeouts(t *testing.T) {
	var buf bytes.Buffer
	s := transport.Stats{Peers: []transport.PeerStats{{Rank: 1, Transport: transport.StatsMetaRoCE, Up: true,
		Paths: []transport.PathStats{{Index: 2, State: "good", PacketsSent: 10, Timeouts: 3, SpuriousTimeouts: 2}}}}}
	logStats(slog.New(slog.NewTextHandler(&buf, nil)), s)
	require.Contains(t, buf.String(), `msg="gocoll: path" peer=1 path=2 state=good`)
	require.Contains(t, buf.String(), ` timeouts=3 spurious=2 `)
}

// The transport line says up to which sizes calls run on the board, only
// when every peer is on shm (the board needs the whole world on one host):
// each limit, or what a board slot holds if that is less.
func TestLogTransportsBoard(t *testing.T) {
	cfg := collective.Config{ChunkBytes: 2 << 20, SmallBytes: 64 << 10, BoardBytes: 16 << 10, BoardBroadcastBytes: 64 << 10, BoardBlockBytes: -1}
	shm := transport.Stats{Peers: []transport.PeerStats{{Rank: 1, Transport: "shm"}, {Rank: 2, Transport: "shm"}}}
	var buf bytes.Buffer
	logTransports(slog.New(slog.NewTextHandler(&buf, nil)), shm, cfg, 66240)
	require.Contains(t, buf.String(), `board="allreduce<=16.0KiB broadcast<=64.0KiB alltoall<=-/peer" kernels=`)

	// BoardRing 256 leaves big slots of 59712 bytes on shm's default board.
	cfg.BoardBlockBytes = 64 << 10
	require.Equal(t, "allreduce<=16.0KiB broadcast<=58.3KiB alltoall<=19.4KiB/peer", boardText(shm, cfg, 59712))
	require.Equal(t, "off", boardText(shm, cfg, 0))

	mixed := transport.Stats{Peers: []transport.PeerStats{{Rank: 1, Transport: "shm"}, {Rank: 2, Transport: "metaroce"}}}
	buf.Reset()
	logTransports(slog.New(slog.NewTextHandler(&buf, nil)), mixed, cfg, 66240)
	require.NotContains(t, buf.String(), "board=")

	cfg.BoardBytes, cfg.BoardBroadcastBytes, cfg.BoardBlockBytes = -1, -1, -1
	require.Equal(t, "off", boardText(shm, cfg, 66240))
	require.Equal(t, "", boardText(transport.Stats{}, cfg, 66240))
}
