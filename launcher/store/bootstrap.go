package store

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// The bootstrap collectives exchange small values (endpoint addresses,
// communicator ids) between the ranks of a group through a Store, before
// the fast transport is up. Each is called by every rank 0..size-1 of the
// group with the same name and size.
//
// A name can be used again and again: every call of a name is a new
// generation, numbered by a per-rank counter in the store, so the ranks must
// call the collectives of one name in the same order. A call ends with a
// *MissingRanksError naming the ranks that had not arrived when ctx ended.
// After an error the group's state for that name is undefined: use a new
// name (or a new Prefixed view) for the next attempt.
//
// Keys live under "boot/<op>/<len(name)>:<name>/". Each call deletes the
// keys of its previous generation once no rank can need them (Broadcast's
// root deletes those of its own), so a name keeps at most 2*size keys in the
// store between calls. One rank must not call collectives of one name from
// two goroutines at once.

// MissingRanksError is the error of a bootstrap collective that ended before
// every rank it waited for had arrived.
type MissingRanksError struct {
	Op    string // "allgather", "barrier" or "broadcast"
	Name  string // the name passed to the collective
	Ranks []int  // the ranks that had not arrived, ascending
	Err   error  // why the wait ended: ctx's error
}

// maxRanksInMessage bounds how many ranks an error message lists.
const maxRanksInMessage = 16

func (e *MissingRanksError) Error() string {
	var b strings.Builder
	for i, r := range e.Ranks {
		if i == maxRanksInMessage {
			fmt.Fprintf(&b, " and %d more", len(e.Ranks)-i)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(r))
	}
	return fmt.Sprintf("store: %s %q: ranks [%s] missing: %v", e.Op, e.Name, b.String(), e.Err)
}

func (e *MissingRanksError) Unwrap() error { return e.Err }

// group is one rank's view of a bootstrap collective.
type group struct {
	op, name   string
	rank, size int
}

func newGroup(op, name string, rank, size int) (group, error) {
	g := group{op: op, name: name, rank: rank, size: size}
	switch {
	case name == "":
		return g, fmt.Errorf("%w: %s needs a name", ErrInvalid, op)
	case size < 1:
		return g, fmt.Errorf("%w: %s %q of size %d", ErrInvalid, op, name, size)
	case rank < 0 || rank >= size:
		return g, fmt.Errorf("%w: %s %q: rank %d outside [0, %d)", ErrInvalid, op, name, rank, size)
	}
	return g, nil
}

func (g group) base() string {
	return "boot/" + g.op + "/" + strconv.Itoa(len(g.name)) + ":" + g.name + "/"
}

// key names part of generation gen.
func (g group) key(gen int64, part string) string {
	return g.base() + "g" + strconv.FormatInt(gen, 10) + "/" + part
}

func rankPart(prefix string, rank int) string { return prefix + strconv.Itoa(rank) }

// nextGen returns the number of this rank's call of the group's name: 1, 2...
func (g group) nextGen(ctx context.Context, s Store) (int64, error) {
	return s.Add(ctx, g.base()+"gen/"+rankPart("r", g.rank), 1)
}

// waitRanks waits for the keys of ranks, all of generation gen and part
// prefix, and turns missing keys into missing ranks.
func (g group) waitRanks(ctx context.Context, s Store, gen int64, prefix string, ranks []int) error {
	keys := make([]string, len(ranks))
	rankOf := make(map[string]int, len(ranks))
	for i, r := range ranks {
		keys[i] = g.key(gen, rankPart(prefix, r))
		rankOf[keys[i]] = r
	}
	err := s.Wait(ctx, keys...)
	mk, ok := err.(*MissingKeysError)
	if !ok {
		return err
	}
	missing := make([]int, 0, len(mk.Keys))
	for _, k := range mk.Keys {
		if r, ok := rankOf[k]; ok {
			missing = append(missing, r)
		}
	}
	return &MissingRanksError{Op: g.op, Name: g.name, Ranks: missing, Err: mk.Err}
}

func allRanks(size int) []int {
	ranks := make([]int, size)
	for i := range ranks {
		ranks[i] = i
	}
	return ranks
}

// AllGather gives every rank of the group the values of all ranks: it
// returns a slice whose element r is rank r's value. It returns once every
// rank has contributed, or with a *MissingRanksError at ctx's end.
func AllGather(ctx context.Context, s Store, rank, size int, name string, value []byte) ([][]byte, error) {
	g, err := newGroup("allgather", name, rank, size)
	if err != nil {
		return nil, err
	}
	gen, err := g.exchange(ctx, s, value)
	if err != nil {
		return nil, err
	}
	values := make([][]byte, size)
	for r := range values {
		if r == rank {
			values[r] = bytes.Clone(value)
			if values[r] == nil {
				values[r] = []byte{}
			}
			continue
		}
		v, ok, err := s.TryGet(ctx, g.key(gen, rankPart("r", r)))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: allgather %q: rank %d's value was deleted", ErrInvalid, name, r)
		}
		values[r] = v
	}
	return values, g.forget(ctx, s, gen, "r")
}

// Barrier returns once every rank of the group has called it (with the same
// name), or with a *MissingRanksError at ctx's end.
func Barrier(ctx context.Context, s Store, rank, size int, name string) error {
	g, err := newGroup("barrier", name, rank, size)
	if err != nil {
		return err
	}
	gen, err := g.exchange(ctx, s, nil)
	if err != nil {
		return err
	}
	return g.forget(ctx, s, gen, "r")
}

// exchange publishes this rank's value for a new generation and waits for
// every rank's. It returns the generation.
func (g group) exchange(ctx context.Context, s Store, value []byte) (int64, error) {
	gen, err := g.nextGen(ctx, s)
	if err != nil {
		return 0, err
	}
	if err := s.Set(ctx, g.key(gen, rankPart("r", g.rank)), value); err != nil {
		return 0, err
	}
	return gen, g.waitRanks(ctx, s, gen, "r", allRanks(g.size))
}

// forget deletes this rank's key of the generation before gen. Every rank
// has arrived at gen, so none still reads the previous one.
func (g group) forget(ctx context.Context, s Store, gen int64, prefix string) error {
	if gen <= 1 {
		return nil
	}
	_, err := s.Delete(ctx, g.key(gen-1, rankPart(prefix, g.rank)))
	return err
}

// Broadcast gives every rank of the group root's value, and returns it. The
// value passed by other ranks is ignored. On root it returns once every rank
// has received the value; elsewhere once this rank has. Either ends with a
// *MissingRanksError at ctx's end (naming root, on the other ranks).
func Broadcast(ctx context.Context, s Store, rank, size, root int, name string, value []byte) ([]byte, error) {
	g, err := newGroup("broadcast", name, rank, size)
	if err != nil {
		return nil, err
	}
	if root < 0 || root >= size {
		return nil, fmt.Errorf("%w: broadcast %q: root %d outside [0, %d)", ErrInvalid, name, root, size)
	}
	gen, err := g.nextGen(ctx, s)
	if err != nil {
		return nil, err
	}
	valueKey := g.key(gen, "value")
	if rank == root {
		return broadcastRoot(ctx, s, g, gen, value)
	}
	v, err := s.Get(ctx, valueKey)
	if mk, ok := err.(*MissingKeysError); ok {
		return nil, &MissingRanksError{Op: g.op, Name: name, Ranks: []int{root}, Err: mk.Err}
	}
	if err != nil {
		return nil, err
	}
	return v, s.Set(ctx, g.key(gen, rankPart("ack", rank)), nil)
}

// broadcastRoot publishes value, waits for every other rank's ack and then
// deletes the acks and the value.
func broadcastRoot(ctx context.Context, s Store, g group, gen int64, value []byte) ([]byte, error) {
	valueKey := g.key(gen, "value")
	if err := s.Set(ctx, valueKey, value); err != nil {
		return nil, err
	}
	others := make([]int, 0, g.size-1)
	for r := range g.size {
		if r != g.rank {
			others = append(others, r)
		}
	}
	if err := g.waitRanks(ctx, s, gen, "ack", others); err != nil {
		return nil, err
	}
	// Only root knows when the acks are no longer needed: a rank that acked
	// may be root of the next generation before this root has seen them all.
	for _, r := range others {
		if _, err := s.Delete(ctx, g.key(gen, rankPart("ack", r))); err != nil {
			return nil, err
		}
	}
	if _, err := s.Delete(ctx, valueKey); err != nil {
		return nil, err
	}
	v := bytes.Clone(value)
	if v == nil {
		v = []byte{}
	}
	return v, nil
}
