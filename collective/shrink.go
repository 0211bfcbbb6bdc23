package collective

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// ShrinkStore is the part of a key-value store shared by every rank that
// Shrink agrees through (launcher/store's Store has it): Set stores a value,
// TryGet reads one without waiting, CompareAndSet with a nil expected value
// stores only if the key is absent and returns the value the key holds
// afterwards, and Wait returns once every key exists or ctx ends.
type ShrinkStore interface {
	Set(ctx context.Context, key string, value []byte) error
	TryGet(ctx context.Context, key string) ([]byte, bool, error)
	CompareAndSet(ctx context.Context, key string, expected, desired []byte) ([]byte, bool, error)
	Wait(ctx context.Context, keys ...string) error
}

// Membership is implemented by the owner of a communicator (NewOwning's
// closer) that knows the job's store and which ranks have died: it
// supplies Config.Store and Config.Dead where the Config leaves them
// unset, for the communicator and those made from it. gocoll.Init's world
// is one.
type Membership interface {
	// ShrinkStore is the store Shrink agrees through (Config.Store).
	ShrinkStore() ShrinkStore
	// DeadRanks lists the endpoint ranks declared dead (Config.Dead).
	DeadRanks() []int
}

// withMembership fills cfg's Store and Dead from owner, if it is a
// Membership.
func withMembership(cfg Config, owner any) Config {
	m, ok := owner.(Membership)
	if !ok {
		return cfg
	}
	if cfg.Store == nil {
		cfg.Store = m.ShrinkStore()
	}
	if cfg.Dead == nil {
		cfg.Dead = m.DeadRanks
	}
	return cfg
}

// MemberNotifier is implemented by an endpoint that wants to know the
// members of each communicator made over it (the launcher's health guard:
// a rank's death then ends only the operations of communicators it
// belongs to, so a communicator Shrink made without it goes on). Every
// communicator tells it, when it is made, its collective and
// point-to-point OpKey.Comm values and its endpoint ranks.
type MemberNotifier interface {
	CommMembers(keys []uint64, ranks []int)
}

// noteMembers tells ep, if it is a MemberNotifier, who the members of
// communicator id are.
func noteMembers(ep transport.Endpoint, id uint64, ranks []int) {
	if n, ok := ep.(MemberNotifier); ok {
		n.CommMembers([]uint64{id, id ^ p2pSalt, id ^ p2pSalt ^ 1}, ranks)
	}
}

// ErrExcluded is wrapped by the error of Shrink on a rank that the
// survivors left out.
var ErrExcluded = errors.New("collective: this rank was left out by Shrink")

// shrinkPoll bounds how long Shrink waits, in one round, for a survivor's
// proposal before it looks again at the store and at the ranks declared
// dead.
const shrinkPoll = 100 * time.Millisecond

// Shrink returns a new communicator of the ranks that survive a failure,
// as NCCL's ncclCommShrink does: every rank of this communicator that is
// not left out must call it (the same number of times), and the ranks left
// out are the union of what every caller names in exclude (communicator
// ranks) and of the ranks the health checks declared dead (Config.Dead),
// agreed through Config.Store so that every survivor gets the same
// communicator. The survivors keep their order and are renumbered densely
// from 0; the new communicator has this one's Config, its own id and
// sequence numbers, and runs over the same endpoint, so it works over
// every transport.
//
// The agreement: each caller writes its proposal (its exclude set and the
// dead ranks it knows of) to the store; once every rank outside the union
// of the proposals written so far has written its own, the first caller to
// see it records the union as the decision, and every caller adopts that
// decision. A rank that neither calls Shrink nor is named or declared dead
// is waited for, until ctx ends (ctx has no deadline: Config.Timeout).
// A caller that the decision leaves out gets an error wrapping ErrExcluded.
// A caller that names itself, or a rank out of range, gets an error at once.
//
// This communicator is left as it is: it may still hold operations with
// the failed rank; end them with Abort first (Shrink works on an aborted
// communicator). The keys written are a few hundred bytes per rank per
// Shrink and stay in the store until the job ends.
func (c *Comm) Shrink(ctx context.Context, exclude []int) (*Comm, error) {
	if c.cfg.Store == nil {
		return nil, errors.New("collective: Shrink needs Config.Store, a store every rank shares (gocoll.Init's world has one)")
	}
	for _, r := range exclude {
		switch {
		case r < 0 || r >= c.Size():
			return nil, fmt.Errorf("collective: Shrink: excluded rank %d out of range [0, %d)", r, c.Size())
		case r == c.rank:
			return nil, fmt.Errorf("collective: Shrink: rank %d excludes itself (the ranks left out do not call Shrink)", r)
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	c.mu.Lock()
	seq := c.shrinks
	c.shrinks++
	c.mu.Unlock()

	out, err := c.agreeShrink(ctx, seq, exclude)
	if err != nil {
		return nil, fmt.Errorf("collective: Shrink of communicator %#x on rank %d of %d: %w", c.id, c.rank, c.Size(), err)
	}
	var members []int
	for r := range c.Size() {
		if !slices.Contains(out, r) {
			members = append(members, r)
		}
	}
	newRank := slices.Index(members, c.rank)
	if newRank < 0 {
		return nil, fmt.Errorf("collective: Shrink of communicator %#x on rank %d of %d: the survivors left out %s: %w",
			c.id, c.rank, c.Size(), rankList(out), ErrExcluded)
	}
	ranks := make([]int, len(members))
	for i, m := range members {
		ranks[i] = c.ranks[m]
	}
	sub, err := newComm(c.ep, shrinkID(c.id, seq), ranks, newRank, c.cfg)
	if err != nil {
		return nil, err
	}
	sub.topo = subTopology(c.topo, members)
	sub.flight = c.flight
	return sub, nil
}

// agreeShrink runs the agreement of Shrink number seq and returns the
// communicator ranks left out, sorted.
func (c *Comm) agreeShrink(ctx context.Context, seq uint64, exclude []int) ([]int, error) {
	st := c.cfg.Store
	prefix := fmt.Sprintf("shrink/%x/%d/", c.id, seq)
	decision := prefix + "decision"
	propKey := func(r int) string { return prefix + "proposal/" + strconv.Itoa(r) }

	mine := c.unionDead(exclude)
	if err := st.Set(ctx, propKey(c.rank), encodeRanks(mine)); err != nil {
		return nil, fmt.Errorf("writing this rank's proposal to the store: %w", err)
	}
	proposals := make([][]int, c.Size())         // nil: not seen yet
	proposals[c.rank] = append([]int{}, mine...) // non-nil: seen
	for {
		if v, ok, err := st.TryGet(ctx, decision); err != nil {
			return nil, fmt.Errorf("reading the decision from the store: %w", err)
		} else if ok {
			return c.decodeDecision(v)
		}
		union := c.unionDead(exclude)
		for r, p := range proposals {
			if p == nil && r != c.rank {
				v, ok, err := st.TryGet(ctx, propKey(r))
				if err != nil {
					return nil, fmt.Errorf("reading rank %d's proposal from the store: %w", r, err)
				}
				if !ok {
					continue
				}
				if proposals[r], err = decodeRanks(v, c.Size()); err != nil {
					return nil, fmt.Errorf("rank %d's proposal: %w", r, err)
				}
				if proposals[r] == nil {
					proposals[r] = []int{}
				}
			}
			union = mergeRanks(union, proposals[r])
		}
		waitFor := -1
		for r := range c.Size() {
			if proposals[r] == nil && !slices.Contains(union, r) {
				waitFor = r
				break
			}
		}
		if waitFor < 0 {
			v, _, err := st.CompareAndSet(ctx, decision, nil, encodeRanks(union))
			if err != nil {
				return nil, fmt.Errorf("writing the decision to the store: %w", err)
			}
			return c.decodeDecision(v)
		}
		round, cancel := context.WithTimeout(ctx, shrinkPoll)
		err := st.Wait(round, propKey(waitFor))
		cancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for rank %d to call Shrink (or to be declared dead or named): %w", waitFor, ctx.Err())
		}
		_ = err // a round that ended: look again
	}
}

func (c *Comm) decodeDecision(v []byte) ([]int, error) {
	out, err := decodeRanks(v, c.Size())
	if err != nil {
		return nil, fmt.Errorf("the decision in the store: %w", err)
	}
	return out, nil
}

// unionDead returns exclude and the communicator ranks Config.Dead names,
// sorted and without repeats.
func (c *Comm) unionDead(exclude []int) []int {
	out := mergeRanks(nil, exclude)
	if c.cfg.Dead == nil {
		return out
	}
	var dead []int
	for _, ep := range c.cfg.Dead() {
		if i := slices.Index(c.ranks, ep); i >= 0 && i != c.rank {
			dead = append(dead, i)
		}
	}
	return mergeRanks(out, dead)
}

// mergeRanks returns the sorted union of a and b without repeats.
func mergeRanks(a, b []int) []int {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// encodeRanks writes ranks as decimal numbers separated by commas.
func encodeRanks(ranks []int) []byte {
	s := make([]string, len(ranks))
	for i, r := range ranks {
		s[i] = strconv.Itoa(r)
	}
	return []byte(strings.Join(s, ","))
}

// decodeRanks reads what encodeRanks wrote: distinct ranks in [0, size),
// returned sorted. The bytes come from the store, so anything else is an
// error, never a panic.
func decodeRanks(b []byte, size int) ([]int, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) > 12*size+12 {
		return nil, fmt.Errorf("a rank list of %d bytes for %d ranks", len(b), size)
	}
	var out []int
	for f := range strings.SplitSeq(string(b), ",") {
		r, err := strconv.Atoi(f)
		if err != nil || r < 0 || r >= size || strconv.Itoa(r) != f {
			return nil, fmt.Errorf("bad rank %q in a rank list (world of %d)", f, size)
		}
		out = append(out, r)
	}
	slices.Sort(out)
	if len(slices.Compact(slices.Clone(out))) != len(out) {
		return nil, fmt.Errorf("a rank list names a rank twice: %q", b)
	}
	return out, nil
}

// shrinkID is the id of the communicator made by Shrink number seq of the
// communicator parent.
func shrinkID(parent, seq uint64) uint64 {
	h := fnv.New64a()
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], parent)
	binary.LittleEndian.PutUint64(b[8:], seq)
	copy(b[16:], "shrink\x00\x00")
	h.Write(b[:])
	return h.Sum64()
}
