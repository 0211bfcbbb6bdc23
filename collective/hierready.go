package collective

// The hierarchical pipeline's index of ready receives (see hierpiperun.go's
// next): a receive becomes ready once it is posted, every receive it
// depends on has been taken (hierdeps.go) and the send it waits for when
// taken, if any, is posted. Each receive counts the conditions it still
// lacks (need); taking a receive, posting one, and posting a send each
// count down the receives they free, so no receive's dependencies are
// walked more than once in all. A receive whose count reaches zero goes
// into its sender's heap, by wait position: next looks at the first of
// each sender's ready receives, not at every posted one, so a call costs
// O(senders + log receives) however many receives are posted ahead.

// hready is the pipeline's ready index.
type hready struct {
	need    []int32   // by wait position: conditions not met yet
	freed   [][]int32 // by wait position: the receives waiting for it to be taken (with repeats)
	sender  []int32   // by wait position: its sender's index in heaps
	heaps   [][]int32 // by sender: its ready receives not taken, a min-heap of wait positions
	senders []int     // by index in heaps: the peer
	looks   int       // receives next has looked at (tests count them)
}

// takenNeed is a taken receive's need: more than any count down can meet.
const takenNeed = 1 << 30

// init sizes the index for n receives, the receive at wait position w
// coming from peer left(w) and depending on deps(w), plus one send when
// sendDep(w). Every receive starts unposted.
func (x *hready) init(n int, left func(w int) int, deps func(w int) []int, sendDep func(w int) bool) {
	x.need = make([]int32, n)
	x.freed = make([][]int32, n)
	x.sender = make([]int32, n)
	index := map[int]int32{}
	for w := range n {
		peer := left(w)
		s, ok := index[peer]
		if !ok {
			s = int32(len(x.senders))
			index[peer] = s
			x.senders = append(x.senders, peer)
		}
		x.sender[w] = s
		need := int32(1 + len(deps(w))) // posting, the receives it depends on
		if sendDep(w) {
			need++
		}
		x.need[w] = need
		for _, d := range deps(w) {
			x.freed[d] = append(x.freed[d], int32(w))
		}
	}
	x.heaps = make([][]int32, len(x.senders))
}

// met records that one condition of receive w holds now.
func (x *hready) met(w int) {
	x.need[w]--
	if x.need[w] == 0 {
		x.push(w)
	}
}

// taken records that receive w has been taken: it leaves its sender's
// heap (it is the first there: the lowest receive not taken, or one next
// found first; or, not ready, not in it at all, and then never put in),
// and the receives that depend on it count down.
func (x *hready) taken(w int) {
	if h := x.heaps[x.sender[w]]; len(h) > 0 && h[0] == int32(w) {
		x.pop(int(x.sender[w]))
	}
	x.need[w] = takenNeed
	for _, v := range x.freed[w] {
		x.met(int(v))
	}
	x.freed[w] = nil
}

// first returns sender s's first ready receive not taken, if any.
func (x *hready) first(s int) (int, bool) {
	if h := x.heaps[s]; len(h) > 0 {
		x.looks++
		return int(h[0]), true
	}
	return -1, false
}

func (x *hready) push(w int) {
	s := x.sender[w]
	h := append(x.heaps[s], int32(w))
	for i := len(h) - 1; i > 0; {
		up := (i - 1) / 2
		if h[up] <= h[i] {
			break
		}
		h[up], h[i] = h[i], h[up]
		i = up
	}
	x.heaps[s] = h
}

func (x *hready) pop(s int) {
	h := x.heaps[s]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < len(h) && h[l] < h[small] {
			small = l
		}
		if l+1 < len(h) && h[l+1] < h[small] {
			small = l + 1
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	x.heaps[s] = h
}
