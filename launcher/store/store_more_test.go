package store

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompareAndSet(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s, ctx := f.handle(), testCtx(t, long)
		type step struct {
			expected, desired []byte
			wantCur           []byte
			wantSwapped       bool
		}
		steps := []step{
			{expected: []byte("x"), desired: []byte("y"), wantCur: nil, wantSwapped: false},        // absent, expected a value
			{expected: []byte{}, desired: []byte("y"), wantCur: nil, wantSwapped: false},           // absent is not empty
			{expected: nil, desired: []byte("first"), wantCur: []byte("first"), wantSwapped: true}, // create
			{expected: nil, desired: []byte("again"), wantCur: []byte("first"), wantSwapped: false},
			{expected: []byte("wrong"), desired: []byte("z"), wantCur: []byte("first"), wantSwapped: false},
			{expected: []byte("first"), desired: []byte{}, wantCur: []byte{}, wantSwapped: true},
			{expected: nil, desired: []byte("z"), wantCur: []byte{}, wantSwapped: false}, // empty is not absent
			{expected: []byte{}, desired: []byte("last"), wantCur: []byte("last"), wantSwapped: true},
		}
		for i, st := range steps {
			cur, swapped, err := s.CompareAndSet(ctx, "cas", st.expected, st.desired)
			require.NoError(t, err, "step %d", i)
			require.Equal(t, st.wantSwapped, swapped, "step %d", i)
			require.Equal(t, st.wantCur, cur, "step %d", i)
		}
		v, err := s.Get(ctx, "cas")
		require.NoError(t, err)
		require.Equal(t, []byte("last"), v)
	})
}

func TestCompareAndSetWakesWaiter(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		getter, ctx := f.handle(), testCtx(t, long)
		got := make(chan []byte, 1)
		go func() { v, _ := getter.Get(ctx, "k"); got <- v }()
		waitPending(t, f, 1)
		_, swapped, err := f.handle().CompareAndSet(ctx, "k", nil, []byte("v"))
		require.NoError(t, err)
		require.True(t, swapped)
		require.Equal(t, []byte("v"), <-got)
	})
}

func TestDelete(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s, ctx := f.handle(), testCtx(t, long)
		existed, err := s.Delete(ctx, "d")
		require.NoError(t, err)
		require.False(t, existed)
		require.NoError(t, s.Set(ctx, "d", []byte("v")))
		existed, err = s.Delete(ctx, "d")
		require.NoError(t, err)
		require.True(t, existed)
		_, ok, err := s.TryGet(ctx, "d")
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func TestInvalidKeys(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s, ctx := f.handle(), testCtx(t, long)
		require.ErrorIs(t, s.Set(ctx, "", nil), ErrInvalid)
		_, err := s.Get(ctx, "")
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorIs(t, s.Wait(ctx, "a", ""), ErrInvalid)
		_, err = s.Add(ctx, "", 1)
		require.ErrorIs(t, err, ErrInvalid)
	})
}

func TestLimits(t *testing.T) {
	lim := Limits{MaxKeyBytes: 8, MaxValueBytes: 16, MaxKeys: 3, MaxStoredBytes: 40, MaxPendingWaits: 2}
	eachBackend(t, lim, func(t *testing.T, f fixture) {
		s, ctx := f.handle(), testCtx(t, long)
		require.ErrorIs(t, s.Set(ctx, "123456789", nil), ErrLimit, "key too long")
		require.ErrorIs(t, s.Wait(ctx, "123456789"), ErrLimit, "wait key too long")
		err := s.Set(ctx, "k", make([]byte, 17))
		require.ErrorIs(t, err, ErrLimit)
		require.Contains(t, err.Error(), "MaxValueBytes 16")

		require.NoError(t, s.Set(ctx, "a", make([]byte, 16)))
		require.NoError(t, s.Set(ctx, "b", make([]byte, 16)))                          // 34 bytes stored
		require.ErrorIs(t, s.Set(ctx, "c", make([]byte, 6)), ErrLimit, "stored bytes") // would be 41
		require.NoError(t, s.Set(ctx, "c", make([]byte, 5)))                           // 40
		require.ErrorIs(t, s.Set(ctx, "d", nil), ErrLimit, "key count")
		_, err = s.Add(ctx, "d", 1)
		require.ErrorIs(t, err, ErrLimit)
		_, _, err = s.CompareAndSet(ctx, "d", nil, nil)
		require.ErrorIs(t, err, ErrLimit)
		require.NoError(t, s.Set(ctx, "a", nil), "replacing shrinks") // 24
		existed, err := s.Delete(ctx, "b")
		require.NoError(t, err)
		require.True(t, existed) // 7
		require.NoError(t, s.Set(ctx, "d", make([]byte, 16)))

		// Pending waits: two may block; the third fails at once.
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		errs := make(chan error, 2)
		for range 2 {
			w := f.handle()
			go func() { errs <- w.Wait(wctx, "never") }()
		}
		waitPending(t, f, 2)
		err = s.Wait(ctx, "never")
		require.ErrorIs(t, err, ErrLimit)
		require.Contains(t, err.Error(), "MaxPendingWaits 2")
		cancel()
		for range 2 {
			require.ErrorIs(t, <-errs, context.Canceled)
		}
		waitPending(t, f, 0)
		require.NoError(t, s.Wait(ctx, "a", "d"), "present keys need no pending slot")
	})
}

func TestCloseWakesWaiters(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s, ctx := f.handle(), testCtx(t, long)
		errs := make(chan error, 2)
		go func() { errs <- s.Wait(ctx, "never") }()
		go func() { _, err := s.Get(ctx, "never2"); errs <- err }()
		waitPending(t, f, 2)
		f.shutdown()
		for range 2 {
			require.ErrorIs(t, <-errs, ErrClosed)
		}
		require.ErrorIs(t, s.Set(ctx, "x", nil), ErrClosed)
		_, err := s.Add(ctx, "x", 1)
		require.ErrorIs(t, err, ErrClosed)
	})
}

func TestPrefixed(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		base, ctx := f.handle(), testCtx(t, long)
		job1, job2 := Prefixed(base, "job1/"), Prefixed(base, "job2/")
		require.NoError(t, job1.Set(ctx, "k", []byte("one")))
		require.NoError(t, job2.Set(ctx, "k", []byte("two")))
		v, err := job1.Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, []byte("one"), v)
		v, err = base.Get(ctx, "job2/k")
		require.NoError(t, err)
		require.Equal(t, []byte("two"), v)

		n, err := job1.Add(ctx, "n", 3)
		require.NoError(t, err)
		require.Equal(t, int64(3), n)
		_, swapped, err := job2.CompareAndSet(ctx, "n", nil, []byte("x"))
		require.NoError(t, err)
		require.True(t, swapped, "job2/n is distinct from job1/n")
		existed, err := job2.Delete(ctx, "n")
		require.NoError(t, err)
		require.True(t, existed)
		_, ok, err := job1.TryGet(ctx, "n")
		require.NoError(t, err)
		require.True(t, ok)

		wctx := newExpiringCtx(t)
		go func() {
			waitFor(func() bool { return f.pending() == 1 })
			wctx.expire()
		}()
		err = job1.Wait(wctx, "k", "absent")
		var mk *MissingKeysError
		require.ErrorAs(t, err, &mk)
		require.Equal(t, []string{"absent"}, mk.Keys, "keys are named without the prefix")
		require.ErrorIs(t, job1.Set(ctx, "", nil), ErrInvalid, "the prefix does not make an empty key valid")
		require.NoError(t, job1.Close())
		require.NoError(t, base.Set(ctx, "still", nil), "closing a view leaves the store open")
	})
}

func TestMissingKeysErrorMessage(t *testing.T) {
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = strings.Repeat("k", i+1)
	}
	msg := (&MissingKeysError{Keys: keys, Err: context.DeadlineExceeded}).Error()
	require.Contains(t, msg, `"kkkkkkkk" and 12 more]`)
	require.NotContains(t, msg, `"kkkkkkkkk"`)
	require.Contains(t, msg, "deadline exceeded")
}
