package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

// Where UDP between two hosts is blocked (a firewall), MetaRoCE's
// handshake between their ranks never completes. Connecting MetaRoCE
// therefore starts with a probe: a Connect bounded by GOCOLL_UDP_PROBE_TIMEOUT
// (Job.UDPProbeTimeout). Then every rank publishes the ranks its probe did
// not reach to the store and reads everyone's, so all ranks hold the same
// list of blocked pairs: a pair is blocked if either of its ranks failed to
// reach the other (UDP may be blocked one way only). With auto, every rank
// then connects TCP too (TCP meshes need every rank), each pair that is
// blocked uses it, and each rank of such a pair says so in one line on
// stderr; MetaRoCE is connected without those peers
// (mrtransport.Listener.ConnectExcept). With GOCOLL_TRANSPORT=metaroce,
// every rank fails with one line naming the blocked pairs.

// probeKey names the store exchange of the probe's results.
const probeKey = "udp-probe"

// maxPairsNamed bounds how many blocked pairs an error or notice lists.
const maxPairsNamed = 4

// probeOutcome is what the ranks learned from the probe.
type probeOutcome struct {
	ep      *mrtransport.Endpoint // nil unless this rank's probe reached every peer
	blocked []bool                // by rank: this rank's pair with it is blocked
	pairs   [][2]int              // every blocked pair of the world, lower rank first
}

// connectProbed connects l to peers within probe, and agrees with the
// other ranks through exchange on which pairs are blocked. On error it
// closes l.
func (l mrListener) connectProbed(ctx context.Context, peers []mrtransport.PeerAddr) (probeOutcome, error) {
	pctx, cancel := context.WithTimeout(ctx, l.spec.UDPProbe)
	ep, err := l.Listener.Connect(pctx, peers)
	probeEnded := pctx.Err() != nil && ctx.Err() == nil // (before cancel sets it)
	cancel()
	var mine []int
	if err != nil {
		if !probeEnded { // another failure, or the caller's ctx ended
			_ = l.Listener.Close()
			return probeOutcome{}, err
		}
		mine = l.Listener.Unconnected()
	}
	if l.spec.Exchange == nil {
		if err != nil {
			_ = l.Listener.Close()
			return probeOutcome{}, err
		}
		return probeOutcome{ep: ep, blocked: make([]bool, len(peers))}, nil
	}
	out, xerr := exchangeProbe(ctx, l.spec, mine)
	if xerr != nil {
		_ = l.Listener.Close()
		return probeOutcome{}, xerr
	}
	out.ep = ep
	return out, nil
}

// settleTimeout bounds settle's wait for the other ranks.
const settleTimeout = 5 * time.Second

// settle waits (at most settleTimeout) until every rank has read the
// probe's results, before this rank fails the job: the rank serving the
// store would otherwise take it away before the others read them, and they
// would fail with "connection to the store lost" instead of the reason.
func (l mrListener) settle(ctx context.Context) {
	if l.spec.Exchange == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	_, _ = l.spec.Exchange(ctx, probeKey+"-read", nil) // an all-gather is a barrier
}

// exchangeProbe publishes the ranks this rank did not reach and gathers
// everyone's into the world's blocked pairs.
func exchangeProbe(ctx context.Context, spec transportSpec, mine []int) (probeOutcome, error) {
	b, _ := json.Marshal(mine) // []int always encodes
	all, err := spec.Exchange(ctx, probeKey, b)
	if err != nil {
		return probeOutcome{}, fmt.Errorf("sharing which ranks UDP reaches: %w", err)
	}
	out := probeOutcome{blocked: make([]bool, spec.Size)}
	seen := map[[2]int]bool{}
	for r, v := range all {
		var unreached []int
		if err := json.Unmarshal(v, &unreached); err != nil {
			return probeOutcome{}, fmt.Errorf("rank %d's UDP probe result %.40q: %v", r, v, err)
		}
		for _, u := range unreached {
			if u < 0 || u >= spec.Size || u == r {
				return probeOutcome{}, fmt.Errorf("rank %d's UDP probe names rank %d of %d", r, u, spec.Size)
			}
			p := [2]int{min(r, u), max(r, u)}
			if !seen[p] {
				seen[p] = true
				out.pairs = append(out.pairs, p)
			}
			switch spec.Rank {
			case r:
				out.blocked[u] = true
			case u:
				out.blocked[r] = true
			}
		}
	}
	slices.SortFunc(out.pairs, func(a, b [2]int) int { return (a[0]-b[0])*spec.Size + a[1] - b[1] })
	return out, nil
}

// blockedError is the one line every rank fails with when MetaRoCE was
// forced and UDP is blocked between some ranks.
func blockedError(pairs [][2]int, peers []mrtransport.PeerAddr, probe time.Duration) error {
	var b strings.Builder
	for i, p := range pairs {
		if i == maxPairsNamed {
			fmt.Fprintf(&b, " and %d more pairs", len(pairs)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s and %s", rankAt(p[0], peers), rankAt(p[1], peers))
	}
	return fmt.Errorf("UDP is blocked between %s: no MetaRoCE handshake within %v (%s); "+
		"open UDP between those hosts (%s chooses the ports), or leave %s unset to use TCP for such pairs",
		b.String(), probe, EnvUDPProbeTimeout, EnvUDPPorts, EnvTransport)
}

// fallbackNotice is the line a rank prints when it reaches some peers
// through TCP because UDP to them is blocked.
func fallbackNotice(rank int, blocked []bool, peers []mrtransport.PeerAddr, probe time.Duration) string {
	var names []string
	for r, b := range blocked {
		if b {
			names = append(names, rankAt(r, peers))
		}
	}
	pairs := "that pair"
	if len(names) > 1 {
		pairs = "those pairs"
	}
	if len(names) > maxPairsNamed {
		names = append(names[:maxPairsNamed], fmt.Sprintf("%d more", len(names)-maxPairsNamed))
	}
	return fmt.Sprintf("gocoll: rank %d: UDP to %s is blocked (no MetaRoCE handshake within %v): using TCP for %s",
		rank, strings.Join(names, ", "), probe, pairs)
}

// rankAt names rank r and the IP address of its first path.
func rankAt(r int, peers []mrtransport.PeerAddr) string {
	if r < len(peers) && len(peers[r].Paths) > 0 {
		return fmt.Sprintf("rank %d (%s)", r, peers[r].Paths[0].Addr())
	}
	return fmt.Sprintf("rank %d", r)
}
