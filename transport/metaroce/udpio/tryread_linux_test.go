package udpio

import (
	"bytes"
	"testing"
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
	for range 1000 { // loopback delivers within the send; allow a scheduler hiccup
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
