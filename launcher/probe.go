package launcher

import (
	"context"
	"fmt"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/topology"
)

// probeCommID is the id of the communicator the link probe runs on, apart
// from the world communicator's (worldCommID) and those Split derives.
const probeCommID = 1<<62 | 0x70726f6265 // "probe"

// probeLinks gives topo the link figures of the job (GOCOLL_PROBE=1), for
// the cost model's choice, measured now (collective/tune/probe: ping-pongs
// and one bulk transfer between one pair of ranks per level) on a
// communicator of its own over the world's endpoint, before the world
// communicator forms. The probe shares the figures (an AllReduce), so
// every rank gets the very same ones and makes the same choice (the
// operation headers check it). Levels topo's own Links give are kept.
func (lc *lifecycle) probeLinks(ctx context.Context, cfg collective.Config, topo *topology.Topology) error {
	cfg.Topology = topo
	c, err := collective.New(lc.guard, probeCommID, cfg)
	if err != nil {
		return fmt.Errorf("probing the links: %w", err)
	}
	defer c.Close()
	ls, err := probe.Measure(ctx, c, *topo, probe.Options{})
	if err != nil {
		return fmt.Errorf("probing the links: %w", err)
	}
	merged := topology.Links{}
	if topo.Links != nil {
		merged = *topo.Links
	}
	for _, l := range []struct{ from, to **topology.Link }{{&ls.Host, &merged.Host}, {&ls.Site, &merged.Site}, {&ls.WAN, &merged.WAN}} {
		if *l.to == nil && *l.from != nil {
			*l.to = *l.from
		}
	}
	topo.Links = &merged
	lc.log.Info("link figures", "host", linkText(merged.Host), "site", linkText(merged.Site), "wan", linkText(merged.WAN))
	return topo.Validate()
}

// linkText is l for a log line.
func linkText(l *topology.Link) string {
	if l == nil {
		return "not measured"
	}
	return fmt.Sprintf("%v one way, %.4g B/s", l.Latency, l.Bandwidth)
}
