package mrtransport

import "time"

// Re-picking a path's port (see Config.Repick).
//
// ECMP routers hash a datagram's addresses and ports to pick one of their
// links, so a path's source port chooses its link, blindly: 8 paths over 4
// links leave a link unused about a third of the time. Two paths hashed
// onto one link share its capacity and its queue: they "behave as one".
// A sender sees that in its per-path figures: over the same interval their
// queueing delay (SRTT less MinRTT) rises and falls together and their
// losses come together, and each carries about the same, lower, rate than
// a path alone on a link. When it sees that, it re-opens one of the two
// paths' sockets on another port, so that the path's datagrams hash anew,
// as MetaRoCE's NIC re-picks a port to leave a bad route; first where some
// other path runs clearly faster (capacity is known to exist elsewhere).
// Moving one of two paths that share a link never leaves that link
// unused, so a re-pick cannot lose a link, only find one; where all paths
// share one bottleneck (behind one NIC) or every link is already used, it
// finds nothing and the pacer below makes the tries rare.
//
// The decision, pickRepick, is a pure function of a window of per-path
// samples taken every RepickPolicy.Sample. Re-picks are bounded: at most
// one per endpoint per RepickPolicy.Interval, and every re-pick that did
// not raise the endpoint's send rate by RepickPolicy.Gain doubles the
// interval, up to RepickPolicy.MaxInterval (a gain resets it), so a
// fabric where moving cannot help (unequal links, one bottleneck) sees
// re-picks become rare. A re-pick after which the rate fell by Gain is
// undone (the old socket is still open, so the path returns to its old
// port): paths on separate links can look alike (one sender's scheduling
// moves both RTTs), and a move may land on a busier link.
//
// Only one end of a connection re-picks its paths (decides): a port names
// a path both ways (a router hashes the reversed addresses too), so both
// ends moving paths for their own sending would shuffle each other's
// placement. It is the lower-ranked end, unless that end only receives on
// the connection: then the sending end decides, whose per-path queueing
// delays show which paths share a link (see decides). crowded.go adds a
// second rule, for links that several connections share.

// RepickPolicy configures port re-picking; see Config.Repick. A zero field
// takes its default.
type RepickPolicy struct {
	// Off turns re-picking off.
	Off bool
	// Sample is how often the per-path figures are sampled. Default
	// 100 ms, at least 10 ms.
	Sample time.Duration
	// Window is the samples a decision looks at, 4 to 64. Default 10.
	Window int
	// Interval is the least time between two re-picks of an endpoint.
	// Default 1 s, at least Sample × Window.
	Interval time.Duration
	// MaxInterval bounds the interval as it doubles. Default 64 s.
	MaxInterval time.Duration
	// Correlation is the least Pearson correlation of two paths' series
	// (queueing delay changes, or losses, per sample) for them to behave
	// as one, 0 to 1. Default 0.8.
	Correlation float64
	// Faster is how much faster than a shared pair's slower path another
	// path must run for a re-pick, above 1. Default 1.3.
	Faster float64
	// Gain is the rise of the connection's rate that counts a re-pick as
	// successful, above 1. Default 1.05.
	Gain float64
	// Early is how long the early phase lasts, counted from the first
	// data the endpoint's connections carry (either way) in the time
	// they carry data: a pause does not count (earlyClock); negative for
	// none (withDefaults makes it 0). Default 2 s; longer in proportion on paths whose
	// round trips make the phase sample slower than EarlySample (it
	// samples no faster than every two round trips), at most Early ×
	// Sample / EarlySample (see earlyLength). In
	// it, paths are sampled every EarlySample, a decision looks at the
	// last EarlyWindow samples and re-picks are paced EarlyInterval apart
	// (doubling as Interval does, up to 4 × EarlyInterval), so that the
	// paths that share a link at the start find the links left unused
	// within the first second, before the steady pace takes over.
	Early time.Duration
	// EarlySample is the sampling period of the early phase, 10 ms to
	// Sample. Default 20 ms.
	EarlySample time.Duration
	// EarlyWindow is the samples an early decision looks at, 4 to
	// Window. Default 10.
	EarlyWindow int
	// EarlyInterval is the least time between two re-picks in the early
	// phase, at least EarlySample × EarlyWindow. Default 200 ms.
	EarlyInterval time.Duration
	// Crowded is how much higher than the lowest path's score (its rates
	// as shares of the median of the connection's other paths') another
	// path's must be for the lowest to count as on the most crowded link
	// and be re-picked (see pickCrowded), above 1; negative: off.
	// Default 1.5.
	Crowded float64
	// CrowdedWindow is the samples a crowded decision, and the judgement
	// of its move, look at (the newest of the phase's window), 4 to
	// EarlyWindow. Default 5.
	CrowdedWindow int
}

// withDefaults fills in p's zero fields and clamps the others.
func (p RepickPolicy) withDefaults() RepickPolicy {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&p.Sample, 100*time.Millisecond)
	p.Sample = max(p.Sample, 10*time.Millisecond)
	if p.Window <= 0 {
		p.Window = 10
	}
	p.Window = min(max(p.Window, 4), 64)
	def(&p.Interval, time.Second)
	p.Interval = max(p.Interval, p.Sample*time.Duration(p.Window))
	def(&p.MaxInterval, 64*time.Second)
	p.MaxInterval = max(p.MaxInterval, p.Interval)
	if p.Correlation <= 0 || p.Correlation > 1 {
		p.Correlation = 0.8
	}
	if p.Faster <= 1 {
		p.Faster = 1.3
	}
	if p.Gain <= 1 {
		p.Gain = 1.05
	}
	if p.Crowded >= 0 && p.Crowded <= 1 {
		p.Crowded = 1.5
	}
	if p.CrowdedWindow <= 0 {
		p.CrowdedWindow = 5
	}
	switch {
	case p.Early < 0:
		p.Early = 0
	case p.Early == 0:
		p.Early = 2 * time.Second
	}
	def(&p.EarlySample, 20*time.Millisecond)
	p.EarlySample = min(max(p.EarlySample, 10*time.Millisecond), p.Sample)
	if p.EarlyWindow <= 0 {
		p.EarlyWindow = 10
	}
	p.EarlyWindow = min(max(p.EarlyWindow, 4), p.Window)
	def(&p.EarlyInterval, 200*time.Millisecond)
	p.EarlyInterval = max(p.EarlyInterval, p.EarlySample*time.Duration(p.EarlyWindow))
	p.CrowdedWindow = min(max(p.CrowdedWindow, 4), p.EarlyWindow)
	return p
}

// early returns the policy of the early phase: p with its sampling,
// window and pacing replaced by the early ones.
func (p RepickPolicy) early() RepickPolicy {
	p.Sample, p.Window, p.Interval, p.MaxInterval = p.EarlySample, p.EarlyWindow, p.EarlyInterval, 4*p.EarlyInterval
	return p
}
