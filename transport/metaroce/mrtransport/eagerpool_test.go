package mrtransport

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The pool hands back kept buffers of the right class, within its limit,
// and ignores buffers it did not make.
func TestEagerPool(t *testing.T) {
	p := eagerPool{limit: 2500}
	a := p.get(1000)
	require.Len(t, a, 1000)
	require.Equal(t, 1024, cap(a))
	b := p.get(1000)
	p.put(a)
	p.put(b)
	require.Equal(t, 2048, p.bytes)
	c := p.get(300) // another class: fresh
	require.Equal(t, 512, cap(c))
	require.Equal(t, 2048, p.bytes)
	p.put(c) // beyond the limit: dropped
	require.Equal(t, 2048, p.bytes)
	d := p.get(513)
	require.Len(t, d, 513)
	require.Equal(t, &b[:1][0], &d[:1][0], "the last kept buffer of the class is reused")
	require.Equal(t, 1024, p.bytes)
	p.put(make([]byte, 100)) // not a power of two: not ours
	require.Equal(t, 1024, p.bytes)
	require.Equal(t, 0, sizeClass(1))
	require.Equal(t, 10, sizeClass(1024))
	require.Equal(t, 11, sizeClass(1025))
}
