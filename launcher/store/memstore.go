package store

import (
	"context"
	"sync"
)

// MemStore is a Store held in this process's memory, for tests and for ranks
// that run as goroutines of one process. Get and Wait block without polling
// and honour ctx. Use NewMemStore; the zero MemStore is not usable.
type MemStore struct {
	t        *table
	borrowed bool // a view of a Server's table: Close does nothing
	once     sync.Once
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore bounded by lim (zero fields take
// their defaults).
func NewMemStore(lim Limits) *MemStore {
	return &MemStore{t: newTable(lim)}
}

// Limits returns the limits in force, with defaults filled in.
func (m *MemStore) Limits() Limits { return m.t.lim }

// enter returns ctx's error if ctx has ended, so that no call succeeds on an
// ended context.
func enter(ctx context.Context) error { return ctx.Err() }

// Set implements Store.
func (m *MemStore) Set(ctx context.Context, key string, value []byte) error {
	if err := enter(ctx); err != nil {
		return err
	}
	return m.t.set(key, value)
}

// Get implements Store.
func (m *MemStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, &MissingKeysError{Keys: []string{key}, Err: err}
	}
	w, err := m.t.await(ctx, []string{key})
	if err != nil {
		return nil, err
	}
	return w.value, nil
}

// TryGet implements Store.
func (m *MemStore) TryGet(ctx context.Context, key string) ([]byte, bool, error) {
	if err := enter(ctx); err != nil {
		return nil, false, err
	}
	return m.t.tryGet(key)
}

// Add implements Store.
func (m *MemStore) Add(ctx context.Context, key string, delta int64) (int64, error) {
	if err := enter(ctx); err != nil {
		return 0, err
	}
	return m.t.add(key, delta)
}

// CompareAndSet implements Store.
func (m *MemStore) CompareAndSet(ctx context.Context, key string, expected, desired []byte) ([]byte, bool, error) {
	if err := enter(ctx); err != nil {
		return nil, false, err
	}
	return m.t.compareAndSet(key, expected, desired)
}

// Wait implements Store.
func (m *MemStore) Wait(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return &MissingKeysError{Keys: append([]string(nil), keys...), Err: err}
	}
	_, err := m.t.await(ctx, append([]string(nil), keys...))
	return err
}

// Delete implements Store.
func (m *MemStore) Delete(ctx context.Context, key string) (bool, error) {
	if err := enter(ctx); err != nil {
		return false, err
	}
	return m.t.del(key)
}

// Close implements Store: pending waits end with ErrClosed. Closing twice is
// a no-op. Close of the view returned by [Server.Local] does nothing.
func (m *MemStore) Close() error {
	if !m.borrowed {
		m.once.Do(m.t.close)
	}
	return nil
}
