package launcher

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/launcher/store"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// The link figures of a job, for the cost model's choice (collective/tune),
// per level (ranks of a host, hosts of a site, sites) come from, in order:
//
//   - GOCOLL_TOPO_FILE, a version 2 topology file (levels and pairs of
//     hosts), read by rank 0: "file";
//   - GOCOLL_LINKS, figures per level measured before, which gocoll run
//     gives a restarted round (those the first round put in the job's
//     store under LinksKey): "cache";
//   - the probe as the world forms (collective/tune/probe: a few
//     ping-pongs and bulk transfers per level, the WAN's on up to three
//     pairs (two over MetaRoCE, and two more where the next round reads
//     well above them), then every pair of a level at once, whose aggregate counts
//     where every rank reaches the level over MetaRoCE, multipathLevels;
//     the figures shared so that every rank has the same): "probe";
//   - tune.DefaultLinks: "default".
//
// Rank 0's file and cache figures travel in its record of the world's
// all-gather, and whether to probe is a function of the records (every
// rank's GOCOLL_PROBE must be alike) and the topology, so every rank
// makes the same choice. GOCOLL_PROBE unset probes where the job spans
// hosts and a level above the host's has no figures from the file or the
// cache; 0 never probes; 1 probes every level that has none, even on one
// host.

// ProbeMode is GOCOLL_PROBE: when Join measures the links.
type ProbeMode int

const (
	ProbeAuto ProbeMode = iota // unset: where the job spans hosts and some level above the host's has no figures
	ProbeOff                   // 0: never (tune.DefaultLinks where nothing else gives figures)
	ProbeOn                    // 1: every level without figures, even on one host
)

func (m ProbeMode) String() string {
	switch m {
	case ProbeOff:
		return "0"
	case ProbeOn:
		return "1"
	}
	return "auto"
}

// LinksKey is the key, in the job's store (JobStore), under which rank 0
// puts the link figures the job measured or took from the cache, in
// GOCOLL_LINKS's form (FormatLinks). gocoll run reads it, and gives a
// restarted round the figures in GOCOLL_LINKS, so that it does not probe
// again.
const LinksKey = "links"

// Where a level's figures came from.
const (
	fromFile    = "file"
	fromCache   = "cache"
	fromProbe   = "probe"
	fromDefault = "default"
)

// reduceName is GOCOLL_LINKS's key of the reduction's CPU a byte
// (topology.Links.ReducePerByte).
const reduceName = "reduce"

// levelNames are the levels in probe.Pairs' order.
var levelNames = [3]string{topology.LevelHost, topology.LevelSite, topology.LevelWAN}

// level returns a pointer to ls's figures of level l (probe.Pairs' order).
func level(ls *topology.Links, l int) **topology.Link {
	return [3]**topology.Link{&ls.Host, &ls.Site, &ls.WAN}[l]
}

// linksRecord is what rank 0's record says about the links: the figures
// the file and the cache give, and where each level's came from.
type linksRecord struct {
	Links topology.Links `json:"links"`
	From  [3]string      `json:"from"` // host, site, wan: fromFile, fromCache or ""
	// ReduceFrom is where Links.ReducePerByte came from: fromFile,
	// fromCache or "".
	ReduceFrom string `json:"reduce_from,omitempty"`
}

// givenLinks returns rank 0's figures before the world forms: those of
// GOCOLL_TOPO_FILE, then GOCOLL_LINKS's for the levels the file leaves.
func givenLinks(job Job) (*linksRecord, error) {
	rec := &linksRecord{}
	if job.TopoFile != "" {
		t, err := topology.Load(job.TopoFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvTopoFile, err)
		}
		if t.Links != nil {
			rec.Links = *t.Links
			if rec.Links.ReducePerByte != 0 {
				rec.ReduceFrom = fromFile
			}
		}
		for l := range levelNames {
			if *level(&rec.Links, l) != nil {
				rec.From[l] = fromFile
			}
		}
	}
	cached := job.Links
	for l := range levelNames {
		if c := *level(&cached, l); c != nil && rec.From[l] == "" {
			*level(&rec.Links, l), rec.From[l] = c, fromCache
		}
	}
	if rec.Links.ReducePerByte == 0 && cached.ReducePerByte != 0 {
		rec.Links.ReducePerByte, rec.ReduceFrom = cached.ReducePerByte, fromCache
	}
	return rec, nil
}

// settleLinks gives topo the job's link figures: given's (rank 0's
// record), and the probe's for the levels it leaves where the job's
// GOCOLL_PROBE says to probe. It logs them, and rank 0 puts them in the
// store under LinksKey and writes GOCOLL_TOPO_DUMP (dump: rank 0's record
// says it has one to write), every rank hearing how that went (saveLinks).
func (lc *lifecycle) settleLinks(ctx context.Context, cfg collective.Config, topo *topology.Topology, given *linksRecord, dump bool) error {
	start := time.Now()
	ls, from, reduceFrom := topology.Links{}, [3]string{}, ""
	if given != nil {
		ls, from, reduceFrom = given.Links, given.From, given.ReduceFrom
	}
	pairs := probe.Pairs(*topo)
	var skip [3]bool
	wanted := false
	for l, p := range pairs {
		skip[l] = p[0] < 0 || from[l] != ""
		wanted = wanted || !skip[l] && (lc.job.Probe == ProbeOn || lc.job.Probe == ProbeAuto && l > 0)
	}
	if wanted && lc.job.Probe != ProbeOff {
		measured, err := lc.probeLinks(ctx, cfg, *topo, skip)
		if err != nil {
			return err
		}
		for l := range levelNames {
			if m := *level(&measured, l); m != nil && !skip[l] {
				*level(&ls, l), from[l] = m, fromProbe
			}
		}
		if ls.ReducePerByte == 0 && measured.ReducePerByte != 0 {
			ls.ReducePerByte, reduceFrom = measured.ReducePerByte, fromProbe
		}
	}
	topo.Links = &ls
	for l := range from {
		if from[l] == "" {
			from[l] = fromDefault
		}
	}
	lc.linksFrom = from
	if err := topo.Validate(); err != nil {
		return fmt.Errorf("the link figures of rank 0's %s: %w", EnvTopoFile, err)
	}
	full := tune.DefaultLinks().With(*topo)
	text := make([]any, 0, 8)
	for l, k := range [3]topology.Link{full.Host, full.Site, full.WAN} {
		text = append(text, levelNames[l], fmt.Sprintf("%v one way, %.4g B/s (%s)", k.Latency, k.Bandwidth, from[l]))
	}
	lc.log.Info("gocoll: link figures", append(text, "pairs", len(ls.Pairs), "took", time.Since(start).Round(time.Microsecond))...)
	cached := cacheable(ls, from)
	if reduceFrom == fromProbe || reduceFrom == fromCache { // not the file's, as the levels
		cached.ReducePerByte = ls.ReducePerByte
	}
	cache := FormatLinks(cached) // alike on every rank
	if cache == "" && !dump {
		return nil
	}
	return lc.saveLinks(ctx, *topo, cache)
}

// linksSavedName names the store broadcast by which rank 0 tells every
// rank whether it saved the link figures (saveLinks).
const linksSavedName = "links-saved"

// saveLinks has rank 0 put cache in the store under LinksKey (if not "")
// and write GOCOLL_TOPO_DUMP (if set), then tells every rank, through a
// store broadcast, the error that stopped it, or none: so a failure there
// fails every rank's Join at once with rank 0's one-line error, rather
// than rank 0's alone while the others wait for it until a timeout.
func (lc *lifecycle) saveLinks(ctx context.Context, topo topology.Topology, cache string) error {
	var failed []byte
	if lc.job.Rank == 0 {
		if err := lc.writeLinks(ctx, topo, cache); err != nil {
			failed = []byte(strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	said, err := store.Broadcast(ctx, lc.kv, lc.job.Rank, lc.job.Size, 0, linksSavedName, failed)
	if lc.job.Rank == 0 {
		said = failed // rank 0's own, even if the store failed it too
	}
	switch {
	case len(said) > 0:
		return fmt.Errorf("rank 0 could not save the link figures: %s", said)
	case err != nil:
		return fmt.Errorf("waiting for rank 0 to save the link figures: %w", err)
	}
	return nil
}

// writeLinks is rank 0's part of saveLinks.
func (lc *lifecycle) writeLinks(ctx context.Context, topo topology.Topology, cache string) error {
	if cache != "" {
		if err := lc.kv.Set(ctx, LinksKey, []byte(cache)); err != nil {
			return fmt.Errorf("putting the link figures in the store: %w", err)
		}
	}
	if lc.job.TopoDump != "" {
		var b bytes.Buffer
		if err := DumpTopology(&b, topo); err != nil {
			return fmt.Errorf("%s: %w", EnvTopoDump, err)
		}
		if err := os.WriteFile(lc.job.TopoDump, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("%s: %w", EnvTopoDump, err)
		}
	}
	return nil
}

// cacheable returns the levels of ls measured now or before (not the
// file's: a restarted round reads the file again).
func cacheable(ls topology.Links, from [3]string) topology.Links {
	var out topology.Links
	for l := range levelNames {
		if from[l] == fromProbe || from[l] == fromCache {
			*level(&out, l) = *level(&ls, l)
		}
	}
	return out
}

// probeCommID is the id of the communicator the link probe runs on, apart
// from the world communicator's (worldCommID) and those Split derives.
const probeCommID = 1<<62 | 0x70726f6265 // "probe"

// probeLinks measures the levels of topo skip leaves (collective/tune/probe)
// on a communicator of its own over the world's endpoint, before the
// world communicator forms. The probe shares the figures, so every rank
// gets the very same ones.
func (lc *lifecycle) probeLinks(ctx context.Context, cfg collective.Config, topo topology.Topology, skip [3]bool) (topology.Links, error) {
	cfg.Topology = &topo
	c, err := collective.New(lc.guard, probeCommID, cfg)
	if err != nil {
		return topology.Links{}, fmt.Errorf("probing the links: %w", err)
	}
	defer c.Close()
	observe := func(d probe.Detail) {
		lc.log.Info("gocoll: probe bandwidth", "level", levelNames[d.Level], "lone", fmt.Sprintf("%.4g", d.Lone), "spread", fmt.Sprintf("%.4g", d.Spread),
			"contended", fmt.Sprintf("%.4g", d.Contended), "pairs", d.Pairs, "a_link", d.K, "bytes", d.Bytes, "multipath", d.Multipath,
			"bandwidth", fmt.Sprintf("%.4g", d.Bandwidth), "again", fmt.Sprintf("%.4g", d.Again), "spread_pairs", d.SpreadPairs)
	}
	opts := probe.Options{Skip: skip, Observe: observe, Multipath: multipathLevels(topo, lc.job.Rank, lc.guard.TransportStats(), lc.job.Paths)}
	ls, err := probe.Measure(ctx, c, topo, opts)
	if err != nil {
		return topology.Links{}, fmt.Errorf("probing the links (%s=0 turns the probe off): %w", EnvProbe, err)
	}
	return ls, nil
}

// multipathLevels returns, per level of topo (probe.Pairs' order), whether
// rank reaches every peer of that level (on its host; on its site, on
// another host; on another site) over a connection that spreads its
// bytes over several paths: MetaRoCE's (s, the rank's transport
// statistics, say which transport reaches a peer), unless it has one
// path (the connection's Paths, or the job's GOCOLL_PATHS, paths, where
// the connection lists none; 0: the default, several). A level without
// such a peer says yes, leaving the choice to the ranks that have one
// (probe.Options.Multipath: a level is multipath where every rank says
// so).
func multipathLevels(topo topology.Topology, rank int, s transport.Stats, paths int) [3]bool {
	out := [3]bool{true, true, true}
	me, ok := topo.Rank(rank)
	if !ok {
		return [3]bool{}
	}
	for _, p := range s.Peers {
		them, ok := topo.Rank(p.Rank)
		if !ok || p.Rank == rank {
			continue
		}
		l := 2
		switch {
		case them.Host == me.Host:
			l = 0
		case them.SiteName() == me.SiteName():
			l = 1
		}
		n := len(p.Paths)
		if n == 0 {
			n = paths
		}
		if p.Transport != transport.StatsMetaRoCE || n == 1 {
			out[l] = false
		}
	}
	return out
}

// DumpTopology writes topo with every level's link figures, those
// tune.DefaultLinks gives where topo's Links give none, as a version 2
// topology file, which GOCOLL_TOPO_FILE, gocoll topo --topology and
// gocoll sim --topology read.
func DumpTopology(w io.Writer, topo topology.Topology) error {
	links := tune.DefaultLinks().With(topo)
	topo.Links = &topology.Links{Host: &links.Host, Site: &links.Site, WAN: &links.WAN, Pairs: links.Pairs, ReducePerByte: links.ReducePerByte}
	data, err := topology.Marshal(topo)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// FormatLinks writes the levels ls gives in GOCOLL_LINKS's form:
// LEVEL=LATENCY@BANDWIDTH, comma-separated, like
// host=7157ns@1.2e+09,wan=2380632ns@7.77e+07 (latency one way, bandwidth
// in bytes per second of one transfer), and where the level has CPU
// figures @CPU-PER-BYTE@CPU-PER-MESSAGE after them, like
// wan=2143975ns@7.1e+07@4.75e-09@78444ns (seconds of CPU a byte, a
// duration a message), and where it has a busy CPU a byte
// (topology.Link.CPUPerByteBusy) that after them, like
// ...@78444ns@9.5e-09, and where it has a busy latency
// (topology.Link.LatencyBusy) that after them, like ...@9.5e-09@131000ns,
// and where it has a cold latency (topology.Link.LatencyCold) that after
// them, like ...@131000ns@61000ns; then, where ls has the reduction's CPU a byte (topology.Links.ReducePerByte),
// reduce=SECONDS, like reduce=1.2e-10. Pairs are left out.
func FormatLinks(ls topology.Links) string {
	var parts []string
	for l, name := range levelNames {
		if k := *level(&ls, l); k != nil {
			part := name + "=" + strconv.FormatInt(int64(k.Latency), 10) + "ns@" + strconv.FormatFloat(k.Bandwidth, 'g', -1, 64)
			if n := cpuFields(*k); n > 0 {
				cpu := []string{
					strconv.FormatFloat(k.CPUPerByte, 'g', -1, 64), strconv.FormatInt(int64(k.CPUPerMessage), 10) + "ns",
					strconv.FormatFloat(k.CPUPerByteBusy, 'g', -1, 64), strconv.FormatInt(int64(k.LatencyBusy), 10) + "ns",
					strconv.FormatInt(int64(k.LatencyCold), 10) + "ns",
				}
				part += "@" + strings.Join(cpu[:n], "@")
			}
			parts = append(parts, part)
		}
	}
	if ls.ReducePerByte != 0 {
		parts = append(parts, reduceName+"="+strconv.FormatFloat(ls.ReducePerByte, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// cpuFields is how many of a level's CPU figures FormatLinks writes, in
// their order (CPU a byte, a message, busy CPU a byte, busy latency, cold
// latency): up to the last one set, and then at least the first two; 0
// where none is set.
func cpuFields(k topology.Link) int {
	n := 0
	for i, set := range []bool{k.CPUPerByte != 0, k.CPUPerMessage != 0, k.CPUPerByteBusy != 0, k.LatencyBusy != 0, k.LatencyCold != 0} {
		if set {
			n = i + 1
		}
	}
	if n == 0 {
		return 0
	}
	return max(n, 2)
}

// ParseLinks reads GOCOLL_LINKS's form (see FormatLinks; any Go duration
// for the latency, like 25us or 2ms); "" gives no figures.
func ParseLinks(s string) (topology.Links, error) {
	var ls topology.Links
	if s == "" {
		return ls, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		name, figures, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && name == reduceName {
			if ls.ReducePerByte != 0 {
				return ls, fmt.Errorf("%q given twice", reduceName)
			}
			v, err := strconv.ParseFloat(figures, 64)
			if err != nil || !(v > 0 && v <= topology.MaxCPUPerByte) {
				return ls, fmt.Errorf("%q: want %s=SECONDS-A-BYTE in (0, %g], like %s=1.2e-10", part, reduceName, topology.MaxCPUPerByte, reduceName)
			}
			ls.ReducePerByte = v
			continue
		}
		lat, bw, ok2 := strings.Cut(figures, "@")
		bw, cpu, withCPU := strings.Cut(bw, "@")
		if !ok || !ok2 {
			return ls, fmt.Errorf("%q: want LEVEL=LATENCY@BANDWIDTH, like wan=2ms@1e8", part)
		}
		l := -1
		for i, n := range levelNames {
			if n == name {
				l = i
			}
		}
		if l < 0 {
			return ls, fmt.Errorf("%q: unknown level %q (want host, site or wan)", part, name)
		}
		if *level(&ls, l) != nil {
			return ls, fmt.Errorf("level %q given twice", name)
		}
		d, err := time.ParseDuration(lat)
		if err != nil {
			return ls, fmt.Errorf("%q: latency %q is not a duration like 25us", part, lat)
		}
		b, err := strconv.ParseFloat(bw, 64)
		if err != nil {
			return ls, fmt.Errorf("%q: bandwidth %q is not a number of bytes per second", part, bw)
		}
		if d < 0 || d > topology.MaxLatency || !(b >= topology.MinBandwidth) || math.IsInf(b, 0) {
			return ls, fmt.Errorf("%q: want a latency in [0, %v] and a finite bandwidth >= %g bytes per second", part, topology.MaxLatency, topology.MinBandwidth)
		}
		link := &topology.Link{Latency: d, Bandwidth: b}
		if withCPU {
			f := strings.Split(cpu, "@")
			pb, err1 := parseFigure(f, 0, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
			pm, err2 := parseFigure(f, 1, time.ParseDuration)
			bb, err3 := parseFigure(f, 2, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
			lb, err4 := parseFigure(f, 3, time.ParseDuration)
			lc, err5 := parseFigure(f, 4, time.ParseDuration)
			if len(f) < 2 || len(f) > 5 {
				err1 = strconv.ErrSyntax
			}
			if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || !(pb >= 0 && pb <= topology.MaxCPUPerByte) || pm < 0 || pm > topology.MaxCPUPerMessage ||
				!(bb >= 0 && bb <= topology.MaxCPUPerByte) || lb < 0 || lb > topology.MaxLatency || lc < 0 || lc > topology.MaxLatency {
				return ls, fmt.Errorf("%q: want CPU figures @SECONDS-A-BYTE@DURATION-A-MESSAGE[@BUSY-SECONDS-A-BYTE[@BUSY-LATENCY[@COLD-LATENCY]]] in [0, %g], [0, %v] and [0, %v], like @4.7e-09@78us",
					part, topology.MaxCPUPerByte, topology.MaxCPUPerMessage, topology.MaxLatency)
			}
			link.CPUPerByte, link.CPUPerMessage, link.CPUPerByteBusy, link.LatencyBusy, link.LatencyCold = pb, pm, bb, lb, lc
		}
		*level(&ls, l) = link
	}
	return ls, nil
}

// parseFigure parses f[i], one of a level's CPU figures in GOCOLL_LINKS,
// with parse; the zero value where f has no i-th figure (an optional one
// left out).
func parseFigure[T any](f []string, i int, parse func(string) (T, error)) (T, error) {
	if i >= len(f) {
		var zero T
		return zero, nil
	}
	return parse(f[i])
}
