package udpio

import (
	"bytes"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTryReaderDoesNotWait(t *testing.T) {
	rx, tx := listen(t, loopback4, Config{}), listen(t, loopback4, Config{})
	tr := NewTryReader(rx, 4)
	ms := []Message{{Buf: make([]byte, 2048)}, {Buf: make([]byte, 2048)}}
	if n, err := tr.ReadBatch(ms); n != 0 || err != nil {
		t.Fatalf("ReadBatch of an empty socket = %d, %v; want 0, nil at once", n, err)
	}
	want := [][]byte{pattern(1, 100), pattern(2, 1000)}
	if _, err := tx.WriteBatch([]Message{{Buf: want[0], Addr: rx.LocalAddr()}, {Buf: want[1], Addr: rx.LocalAddr()}}); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	// Loopback delivers within the send, or a busy machine's softirq a
	// little later.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		n, err := tr.ReadBatch(ms)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms[:n] {
			if m.Addr != tx.LocalAddr() {
				t.Fatalf("datagram from %v, want %v", m.Addr, tx.LocalAddr())
			}
			got = append(got, bytes.Clone(m.Buf[:m.N]))
		}
		if len(got) == len(want) {
			break
		}
	}
	if len(got) != 2 || !bytes.Equal(got[0], want[0]) || !bytes.Equal(got[1], want[1]) {
		t.Fatalf("read %d datagrams, want the 2 sent intact", len(got))
	}
	if n, err := tr.ReadBatch(ms); n != 0 || err != nil {
		t.Fatalf("ReadBatch once drained = %d, %v; want 0, nil", n, err)
	}
	rx.Close()
	if _, err := tr.ReadBatch(ms); err == nil {
		t.Fatal("ReadBatch after Close: no error")
	}
}

// A TryReader does not wait for a ReadBatch blocked on the same socket
// (which holds the socket's read lock until a datagram comes), and a
// pending error it reads marks ErrorsPending, since the blocked reader
// will not see it.
func TestTryReaderBesideBlockedReader(t *testing.T) {
	s := listen(t, loopback4, Config{})
	require.NoError(t, s.SetReadDeadline(time.Now().Add(20*time.Second)))
	blocked := make(chan error, 1)
	go func() {
		_, err := s.ReadBatch(readBuffers(1, 100))
		blocked <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the reader block
	tr := NewTryReader(s, 4)
	done := make(chan error, 1)
	go func() {
		_, err := tr.ReadBatch(readBuffers(4, 100))
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("TryReader.ReadBatch waited for the blocked ReadBatch")
	}

	require.NoError(t, s.Close())
	require.ErrorIs(t, <-blocked, net.ErrClosed)

	s = listen(t, loopback4, Config{})
	tr = NewTryReader(s, 4)
	dead := closedPort(t, loopback4)
	_, err := s.WriteBatch([]Message{{Buf: []byte("x"), Addr: dead}})
	require.NoError(t, err)
	waitSocketError(t, s)
	_, err = tr.ReadBatch(readBuffers(4, 100))
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	require.True(t, s.ErrorsPending())
	refused, _, err := s.DrainErrors(nil)
	require.NoError(t, err)
	require.Equal(t, []netip.AddrPort{dead}, refused)
}
