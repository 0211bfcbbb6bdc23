package store

import (
	"bytes"
	"context"
	"fmt"
)

// begin starts a wait for keys. If all keys exist it returns a satisfied
// waiter (ready true) and registers nothing. Otherwise it registers a waiter,
// which counts against MaxPendingWaits until finish returns.
func (t *table) begin(keys []string) (w *waiter, ready bool, err error) {
	for _, k := range keys {
		if err := t.checkKey(k); err != nil {
			return nil, false, err
		}
	}
	if err := t.lockOpen(); err != nil {
		return nil, false, err
	}
	defer t.mu.Unlock()
	w = &waiter{keys: keys}
	if t.advanceLocked(w) {
		t.satisfyLocked(w)
		return w, true, nil
	}
	if t.pending >= t.lim.MaxPendingWaits {
		return nil, false, fmt.Errorf("%w: MaxPendingWaits %d waits already pending", ErrLimit, t.lim.MaxPendingWaits)
	}
	w.ready = make(chan struct{})
	t.pending++
	t.registerLocked(w)
	return w, false, nil
}

// finish blocks until the waiter from begin is satisfied, ctx ends, or the
// table closes. A waiter satisfied at the same moment ctx ends succeeds.
func (t *table) finish(ctx context.Context, w *waiter) error {
	if w.ready == nil {
		return nil // satisfied in begin
	}
	var cause error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		cause = ctx.Err()
	case <-t.done:
		cause = ErrClosed
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.ok {
		return nil
	}
	t.unregisterLocked(w)
	t.pending--
	if cause == ErrClosed {
		return fmt.Errorf("%w while waiting for %s", ErrClosed, quoteList(t.missingLocked(w.keys), maxKeysInMessage))
	}
	return &MissingKeysError{Keys: t.missingLocked(w.keys), Err: cause}
}

// await is begin followed by finish.
func (t *table) await(ctx context.Context, keys []string) (*waiter, error) {
	w, _, err := t.begin(keys)
	if err != nil {
		return nil, err
	}
	return w, t.finish(ctx, w)
}

// advanceLocked moves w.next past the keys that exist. Once it reaches the
// end it checks the earlier keys again, since they may have been deleted, and
// reports whether all keys exist now. If not, w.next is a missing key.
func (t *table) advanceLocked(w *waiter) bool {
	for w.next < len(w.keys) {
		if _, ok := t.data[w.keys[w.next]]; !ok {
			return false
		}
		w.next++
	}
	for i, k := range w.keys {
		if _, ok := t.data[k]; !ok {
			w.next = i
			return false
		}
	}
	return true
}

// satisfyLocked records the value of a one-key wait and marks w done.
func (t *table) satisfyLocked(w *waiter) {
	if len(w.keys) == 1 {
		w.value = bytes.Clone(t.data[w.keys[0]])
	}
	w.ok = true
	if w.ready != nil {
		t.pending--
		close(w.ready)
	}
}

func (t *table) registerLocked(w *waiter) {
	k := w.keys[w.next]
	set := t.waiters[k]
	if set == nil {
		set = make(map[*waiter]struct{})
		t.waiters[k] = set
	}
	set[w] = struct{}{}
}

func (t *table) unregisterLocked(w *waiter) {
	k := w.keys[w.next]
	set := t.waiters[k]
	delete(set, w)
	if len(set) == 0 {
		delete(t.waiters, k)
	}
}

// wakeLocked advances every waiter registered on key, which now exists:
// each is satisfied or registered on its next missing key.
func (t *table) wakeLocked(key string) {
	set := t.waiters[key]
	if set == nil {
		return
	}
	delete(t.waiters, key)
	for w := range set {
		if t.advanceLocked(w) {
			t.satisfyLocked(w)
		} else {
			t.registerLocked(w)
		}
	}
}

// missingLocked lists the keys that do not exist, in order.
func (t *table) missingLocked(keys []string) []string {
	var missing []string
	for _, k := range keys {
		if _, ok := t.data[k]; !ok {
			missing = append(missing, k)
		}
	}
	return missing
}
