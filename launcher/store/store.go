package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Store is a key-value store shared by the ranks of one job. Keys are
// non-empty strings; values are byte strings (a stored value is never nil:
// storing nil stores an empty value). All methods are safe for concurrent use.
//
// Every method takes a context. Methods that wait (Get, Wait) end at ctx's
// deadline or cancellation with a [*MissingKeysError] that names the keys
// still missing and wraps ctx's error; they fail that way at once if ctx has
// already ended. A method that does not wait fails with ctx's error if ctx
// has ended before the call, or ends before the answer arrives (then the
// operation may or may not have been applied).
type Store interface {
	// Set stores value under key, replacing any previous value, and wakes
	// every Get and Wait that was waiting for key.
	Set(ctx context.Context, key string, value []byte) error
	// Get returns the value under key, waiting until the key exists or ctx
	// ends.
	Get(ctx context.Context, key string) ([]byte, error)
	// TryGet returns the value under key and true, or nil and false if the
	// key does not exist. It never waits for the key.
	TryGet(ctx context.Context, key string) ([]byte, bool, error)
	// Add adds delta to the counter under key and returns the new value. A
	// counter is stored as a decimal integer (so Get returns e.g. "42"); an
	// absent key counts as 0. Add fails with ErrNotCounter if the value is
	// not a decimal int64 and with ErrOverflow if the sum overflows int64.
	Add(ctx context.Context, key string, delta int64) (int64, error)
	// CompareAndSet stores desired under key if the current value equals
	// expected, where a nil expected means "the key must be absent" and a
	// non-nil empty expected means "the key holds an empty value". It
	// returns the value under key after the call (desired if it swapped;
	// otherwise the current value, or nil if the key is absent) and whether
	// it swapped.
	CompareAndSet(ctx context.Context, key string, expected, desired []byte) ([]byte, bool, error)
	// Wait returns nil once all keys exist at the same moment, waiting until
	// then or until ctx ends. Wait with no keys returns nil at once.
	Wait(ctx context.Context, keys ...string) error
	// Delete removes key and reports whether it existed. Waiters are not
	// woken: they wait for keys to exist.
	Delete(ctx context.Context, key string) (bool, error)
	// Close releases the store. Calls waiting in Get or Wait end with an
	// error wrapping ErrClosed, and every later call fails with ErrClosed.
	Close() error
}

// Errors returned by every Store. Test with errors.Is. Errors that cross the
// network keep their identity: a Client returns the same sentinel, with the
// same message, that the server's store produced.
var (
	// ErrClosed reports a store, server or connection that is closed.
	ErrClosed = errors.New("store: closed")
	// ErrBadJobKey reports a request whose job key the server refused.
	ErrBadJobKey = errors.New("store: job key refused")
	// ErrLimit reports a request that would exceed a documented limit.
	ErrLimit = errors.New("store: limit exceeded")
	// ErrInvalid reports an invalid argument, such as an empty key.
	ErrInvalid = errors.New("store: invalid argument")
	// ErrNotCounter reports an Add on a value that is not a decimal int64.
	ErrNotCounter = errors.New("store: value is not a decimal int64 counter")
	// ErrOverflow reports an Add whose result does not fit in an int64.
	ErrOverflow = errors.New("store: counter overflow")
	// ErrProtocol reports a malformed frame or a protocol violation.
	ErrProtocol = errors.New("store: protocol error")
)

// MissingKeysError is the error of a Get or Wait that ended before all its
// keys existed.
type MissingKeysError struct {
	// Keys lists the keys that did not exist when the wait ended, in the
	// order they were asked for. If ctx had ended before the call, or a
	// Client could not learn the server's answer in time, it lists every key
	// asked for.
	Keys []string
	// Err is why the wait ended: ctx's error (context.DeadlineExceeded or
	// context.Canceled).
	Err error
}

// maxKeysInMessage bounds how many keys an error message lists; the Keys
// field always holds all of them.
const maxKeysInMessage = 8

func (e *MissingKeysError) Error() string {
	return fmt.Sprintf("store: keys still missing %s: %v", quoteList(e.Keys, maxKeysInMessage), e.Err)
}

func (e *MissingKeysError) Unwrap() error { return e.Err }

// quoteList formats at most limit items as a quoted list, followed by the
// count of the rest.
func quoteList(items []string, limit int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, k := range items {
		if i == limit {
			fmt.Fprintf(&b, " and %d more", len(items)-limit)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%q", k)
	}
	b.WriteByte(']')
	return b.String()
}

// Default values of the Limits fields.
const (
	DefaultMaxKeyBytes     = 1024
	DefaultMaxValueBytes   = 1 << 20
	DefaultMaxKeys         = 1 << 16
	DefaultMaxStoredBytes  = 256 << 20
	DefaultMaxPendingWaits = 4096
)

// Limits bound the memory a store uses. A field that is zero or negative
// takes its default. Exceeding a limit fails that one call with an error
// wrapping ErrLimit; the store keeps serving.
type Limits struct {
	// MaxKeyBytes is the longest key, in bytes. Default 1024.
	MaxKeyBytes int
	// MaxValueBytes is the largest value, in bytes. Default 1 MiB.
	MaxValueBytes int
	// MaxKeys is the number of keys the store holds at most. Default 65536.
	MaxKeys int
	// MaxStoredBytes bounds the sum of the lengths of all keys and values.
	// Default 256 MiB.
	MaxStoredBytes int64
	// MaxPendingWaits is the number of Get and Wait calls that may be
	// blocked at once; the next one fails at once. Default 4096.
	MaxPendingWaits int
}

// withDefaults returns l with every non-positive field set to its default.
func (l Limits) withDefaults() Limits {
	if l.MaxKeyBytes <= 0 {
		l.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if l.MaxValueBytes <= 0 {
		l.MaxValueBytes = DefaultMaxValueBytes
	}
	if l.MaxKeys <= 0 {
		l.MaxKeys = DefaultMaxKeys
	}
	if l.MaxStoredBytes <= 0 {
		l.MaxStoredBytes = DefaultMaxStoredBytes
	}
	if l.MaxPendingWaits <= 0 {
		l.MaxPendingWaits = DefaultMaxPendingWaits
	}
	return l
}
