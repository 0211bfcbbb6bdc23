package tcp

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
)

var sampleHeaders = []header{
	{kind: kindData, tag: transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 2}, Seq: 3}, arg: 8, body: 8},
	{kind: kindData},
	{kind: kindRTS, tag: transport.Tag{Seq: 9}, msgID: 7, arg: 64 << 20},
	{kind: kindCTS, flags: ctsTruncated, msgID: 7},
	{kind: kindRData, msgID: 7, arg: 1 << 20, body: 512 << 10},
	{kind: kindRData, flags: rdataWithdrawn, msgID: 7},
	{kind: kindCredit, arg: 1 << 20},
	{kind: kindAbort, tag: transport.Tag{OpKey: transport.OpKey{Comm: 5, Op: 6}}, body: 11},
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range sampleHeaders {
		b := appendHeader(nil, h)
		require.Len(t, b, headerLen)
		got, err := parseHeader(b)
		require.NoError(t, err)
		require.Equal(t, h, got)
	}
}

func TestHeaderRejects(t *testing.T) {
	bad := []header{
		{kind: 0},
		{kind: kindLimit},
		{kind: kindData, arg: 9, body: 8},
		{kind: kindData, arg: MaxEagerLimit + 1, body: MaxEagerLimit + 1},
		{kind: kindRTS, arg: MaxMessageBytes + 1},
		{kind: kindRTS, body: 1},
		{kind: kindCTS, flags: 3},
		{kind: kindRData, body: MaxChunkBytes + 1},
		{kind: kindRData, flags: rdataWithdrawn, body: 1},
		{kind: kindRData, arg: MaxMessageBytes, body: 1},
		{kind: kindCredit},
		{kind: kindAbort, body: MaxReasonBytes + 1},
		{kind: kindAbort, msgID: 1},
	}
	for _, h := range bad {
		_, err := parseHeader(appendHeader(nil, h))
		require.ErrorIs(t, err, errProtocol, "header %+v", h)
	}
	b := appendHeader(nil, sampleHeaders[0])
	b[3] = 1
	_, err := parseHeader(b)
	require.ErrorIs(t, err, errProtocol)
	_, err = parseHeader(b[:headerLen-1])
	require.ErrorIs(t, err, errProtocol)
}

// FuzzParseHeader checks that any bytes either parse into a header that
// encodes back to the same bytes, or give a protocol error; never a panic.
func FuzzParseHeader(f *testing.F) {
	for _, h := range sampleHeaders {
		f.Add(appendHeader(nil, h))
	}
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHeader(b)
		if err != nil {
			require.ErrorIs(t, err, errProtocol)
			return
		}
		if !bytes.Equal(appendHeader(nil, h), b[:headerLen]) {
			t.Fatalf("header %+v does not encode back to %x", h, b[:headerLen])
		}
	})
}
