package tune

// ChannelsMax bounds the channels of a ring AllReduce (collective's
// Config.Channels).
const ChannelsMax = 16

// channelsGain is how much faster (a fraction) a ring on more channels
// must be predicted than the best on fewer for the model to choose it, so
// that figures within the model's error do not add rings that buy nothing.
const channelsGain = 0.05

// ChannelStrides returns up to c strides for rings over n ranks, each
// coprime to n, all distinct mod n (1, n-1, 2, n-2, ...): at most the
// count of such strides. The ring of stride s sends from rank r to r+s.
func ChannelStrides(n, c int) []int {
	var out []int
	for d := 1; d < n && len(out) < c; d++ {
		for _, s := range []int{d, n - d} {
			if len(out) < c && gcd(s, n) == 1 && !contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// RingStrides returns the strides of the rings a ring AllReduce of bytes
// over n ranks in chunks of chunkBytes runs on when c channels are asked
// for: ChannelStrides(n, c), fewer where a part would be under a chunk.
// collective's ring AllReduce and the model both take it.
func RingStrides(n, c, bytes, chunkBytes int) []int {
	return ChannelStrides(n, min(max(1, c), max(1, bytes/max(1, chunkBytes))))
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ringChannels returns the ring AllReduce's phases on the channels
// Input.Channels asks for; where it is 0, on the count among 1, 2, 4, 8
// and 16, at most the most lanes any link has (more rings than lanes add
// no bandwidth, only latency), predicted fastest (more only when at least
// channelsGain faster than the best on fewer), and that count.
func (m *model) ringChannels(asked int) ([]phase, int) {
	n, bytes, chunk := m.n, int(m.bytes), int(m.chunk)
	if asked > 0 {
		s := RingStrides(n, asked, bytes, chunk)
		return m.ringAllReduce(s), len(s)
	}
	var best []phase
	bestT, bestC := 0.0, 0
	lanes := 1
	for _, l := range m.links {
		lanes = max(lanes, l.Lanes)
	}
	for _, l := range m.pairLinks {
		lanes = max(lanes, l.Lanes)
	}
	for _, c := range []int{1, 2, 4, 8, 16} {
		s := RingStrides(n, c, bytes, chunk)
		if c > 1 && c > lanes || len(s) <= bestC {
			continue
		}
		ph := m.ringAllReduce(s)
		t := m.total(ph)
		if best == nil || t < bestT*(1-channelsGain) {
			best, bestT, bestC = ph, t, len(s)
		}
	}
	return best, max(1, bestC)
}
