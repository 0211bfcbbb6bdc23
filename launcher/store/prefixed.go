package store

import (
	"context"
	"strings"
)

// Prefixed returns a view of s in which every key is stored as prefix+key,
// so that several jobs, restart rounds or communicators can share one store
// without seeing each other's keys. Errors name keys without the prefix.
// Close of the view does nothing: s belongs to the caller.
func Prefixed(s Store, prefix string) Store {
	return &prefixedStore{s: s, prefix: prefix}
}

type prefixedStore struct {
	s      Store
	prefix string
}

func (p *prefixedStore) Set(ctx context.Context, key string, value []byte) error {
	return p.s.Set(ctx, p.key(key), value)
}

func (p *prefixedStore) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := p.s.Get(ctx, p.key(key))
	return v, p.unprefix(err)
}

func (p *prefixedStore) TryGet(ctx context.Context, key string) ([]byte, bool, error) {
	return p.s.TryGet(ctx, p.key(key))
}

func (p *prefixedStore) Add(ctx context.Context, key string, delta int64) (int64, error) {
	return p.s.Add(ctx, p.key(key), delta)
}

func (p *prefixedStore) CompareAndSet(ctx context.Context, key string, expected, desired []byte) ([]byte, bool, error) {
	return p.s.CompareAndSet(ctx, p.key(key), expected, desired)
}

func (p *prefixedStore) Wait(ctx context.Context, keys ...string) error {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = p.key(k)
	}
	return p.unprefix(p.s.Wait(ctx, full...))
}

func (p *prefixedStore) Delete(ctx context.Context, key string) (bool, error) {
	return p.s.Delete(ctx, p.key(key))
}

func (p *prefixedStore) Close() error { return nil }

// key maps a key of the view to the underlying store. An empty key stays
// empty, so that it is refused as in any other store.
func (p *prefixedStore) key(k string) string {
	if k == "" {
		return ""
	}
	return p.prefix + k
}

// unprefix rewrites a *MissingKeysError (as Get and Wait return it) to name the view's keys.
func (p *prefixedStore) unprefix(err error) error {
	mk, ok := err.(*MissingKeysError)
	if !ok {
		return err
	}
	keys := make([]string, len(mk.Keys))
	for i, k := range mk.Keys {
		keys[i] = strings.TrimPrefix(k, p.prefix)
	}
	return &MissingKeysError{Keys: keys, Err: mk.Err}
}
