package store

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// table is the state shared by MemStore and Server: the key-value map, its
// limits, and the waiters blocked on missing keys.
//
// A waiter is registered on exactly one key at a time: the first of its keys
// that is missing. A Set of that key advances the waiter, under the lock, to
// its next missing key, so a waiting goroutine is woken only once, when all
// its keys exist. Nothing polls.
type table struct {
	lim Limits

	mu      sync.Mutex
	data    map[string][]byte
	stored  int64 // sum of len(key)+len(value) over data
	waiters map[string]map[*waiter]struct{}
	pending int // waiters registered and not yet done or abandoned
	closed  bool
	done    chan struct{} // closed by close
}

// waiter is one blocked Get or Wait.
type waiter struct {
	keys  []string
	next  int           // keys[:next] were seen to exist; registered on keys[next]
	value []byte        // for a one-key wait: the value when it was satisfied
	ready chan struct{} // closed when satisfied
	ok    bool          // satisfied; guarded by table.mu
}

func newTable(lim Limits) *table {
	return &table{
		lim:     lim.withDefaults(),
		data:    make(map[string][]byte),
		waiters: make(map[string]map[*waiter]struct{}),
		done:    make(chan struct{}),
	}
}

// checkKey validates a key against the limits.
func (t *table) checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if len(key) > t.lim.MaxKeyBytes {
		return fmt.Errorf("%w: key of %d bytes exceeds MaxKeyBytes %d", ErrLimit, len(key), t.lim.MaxKeyBytes)
	}
	return nil
}

// lockOpen locks t and returns nil, or returns ErrClosed with t unlocked.
func (t *table) lockOpen() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	return nil
}

func (t *table) set(key string, value []byte) error {
	if err := t.checkKey(key); err != nil {
		return err
	}
	if err := t.lockOpen(); err != nil {
		return err
	}
	defer t.mu.Unlock()
	return t.storeLocked(key, value)
}

// storeLocked stores a copy of value under key if the limits allow, and
// advances the waiters registered on key.
func (t *table) storeLocked(key string, value []byte) error {
	if len(value) > t.lim.MaxValueBytes {
		return fmt.Errorf("%w: value of %d bytes exceeds MaxValueBytes %d", ErrLimit, len(value), t.lim.MaxValueBytes)
	}
	old, exists := t.data[key]
	growth := int64(len(value) - len(old))
	if !exists {
		if len(t.data) >= t.lim.MaxKeys {
			return fmt.Errorf("%w: store holds MaxKeys %d keys", ErrLimit, t.lim.MaxKeys)
		}
		growth += int64(len(key))
	}
	if t.stored+growth > t.lim.MaxStoredBytes {
		return fmt.Errorf("%w: storing %q would exceed MaxStoredBytes %d", ErrLimit, key, t.lim.MaxStoredBytes)
	}
	t.data[key] = append(make([]byte, 0, len(value)), value...)
	t.stored += growth
	t.wakeLocked(key)
	return nil
}

func (t *table) tryGet(key string) ([]byte, bool, error) {
	if err := t.checkKey(key); err != nil {
		return nil, false, err
	}
	if err := t.lockOpen(); err != nil {
		return nil, false, err
	}
	defer t.mu.Unlock()
	v, ok := t.data[key]
	return bytes.Clone(v), ok, nil
}

func (t *table) add(key string, delta int64) (int64, error) {
	if err := t.checkKey(key); err != nil {
		return 0, err
	}
	if err := t.lockOpen(); err != nil {
		return 0, err
	}
	defer t.mu.Unlock()
	var cur int64
	if v, ok := t.data[key]; ok {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: key %q holds %q", ErrNotCounter, key, truncate(v, 32))
		}
		cur = n
	}
	if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
		return 0, fmt.Errorf("%w: %d + %d under key %q", ErrOverflow, cur, delta, key)
	}
	cur += delta
	return cur, t.storeLocked(key, strconv.AppendInt(nil, cur, 10))
}

// truncate returns at most n bytes of b, for error messages.
func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func (t *table) compareAndSet(key string, expected, desired []byte) ([]byte, bool, error) {
	if err := t.checkKey(key); err != nil {
		return nil, false, err
	}
	if err := t.lockOpen(); err != nil {
		return nil, false, err
	}
	defer t.mu.Unlock()
	cur, exists := t.data[key]
	match := (expected == nil && !exists) || (expected != nil && exists && bytes.Equal(cur, expected))
	if !match {
		return bytes.Clone(cur), false, nil
	}
	if err := t.storeLocked(key, desired); err != nil {
		return nil, false, err
	}
	return bytes.Clone(t.data[key]), true, nil
}

func (t *table) del(key string) (bool, error) {
	if err := t.checkKey(key); err != nil {
		return false, err
	}
	if err := t.lockOpen(); err != nil {
		return false, err
	}
	defer t.mu.Unlock()
	v, ok := t.data[key]
	if ok {
		delete(t.data, key)
		t.stored -= int64(len(key) + len(v))
	}
	return ok, nil
}

// delPrefix deletes every key that starts with prefix and returns how many.
func (t *table) delPrefix(prefix string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k, v := range t.data {
		if strings.HasPrefix(k, prefix) {
			delete(t.data, k)
			t.stored -= int64(len(k) + len(v))
			n++
		}
	}
	return n
}

// close ends every pending wait with ErrClosed and fails every later call.
func (t *table) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		close(t.done)
	}
}

// pendingWaits returns the number of blocked waits.
func (t *table) pendingWaits() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending
}

// keyCount returns the number of keys stored.
func (t *table) keyCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.data)
}
