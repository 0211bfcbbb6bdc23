package udpio

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// Loopback throughput, one sender goroutine and one receiver goroutine.
// One op is one datagram of the given size. The sender keeps at most
// benchWindow bytes in flight (so the receiver's socket buffer does not
// overflow), and the clock stops at the last datagram received.
// Reported: rx_GB/s and rx_Mpkt/s (what arrived), loss_% (what did not).
//
// Modes: "writeto" is the net package one datagram per call on both sides
// (WriteToUDPAddrPort / ReadFromUDPAddrPort); "batch" is WriteBatch and
// ReadBatch of up to 64 messages without GSO; "gso" sends trains of as
// many datagrams as fit in 64 KiB to a receiver with GRO, "gso-nogro" the
// same to a receiver without GRO (the kernel cuts each train on receive).
// A batch carries at most benchWindow/4 bytes.
func BenchmarkLoopback(b *testing.B) {
	for _, size := range []int{MaxPayload, 9000, 1452} {
		for _, mode := range []string{"writeto", "batch", "gso", "gso-nogro"} {
			if mode != "writeto" && mode != "batch" && size > MaxPayload/2 {
				continue // a train needs two datagrams
			}
			b.Run(fmt.Sprintf("size=%d/%s", size, mode), func(b *testing.B) {
				benchLoopback(b, size, mode)
			})
		}
	}
}

const benchWindow = 2 << 20

// flow counts bytes sent and received and lets the sender wait for room.
type flow struct {
	sentBytes, rcvdBytes, rcvdDatagrams, lostBytes atomic.Int64
	lastRecv                                       atomic.Int64 // UnixNano of the last receive
	room                                           chan struct{}
	waiting                                        atomic.Bool
}

func (f *flow) received(bytes, datagrams int) {
	f.rcvdBytes.Add(int64(bytes))
	f.rcvdDatagrams.Add(int64(datagrams))
	f.lastRecv.Store(time.Now().UnixNano())
	if f.waiting.Load() {
		select {
		case f.room <- struct{}{}:
		default:
		}
	}
}

// waitRoom blocks while over benchWindow bytes are in flight. If nothing
// arrives for 200 ms, what is in flight is taken as lost.
func (f *flow) waitRoom() {
	for {
		inflight := f.sentBytes.Load() - f.rcvdBytes.Load() - f.lostBytes.Load()
		if inflight <= benchWindow {
			return
		}
		f.waiting.Store(true)
		if f.sentBytes.Load()-f.rcvdBytes.Load()-f.lostBytes.Load() <= benchWindow {
			f.waiting.Store(false)
			return
		}
		select {
		case <-f.room:
		case <-time.After(200 * time.Millisecond):
			f.lostBytes.Store(f.sentBytes.Load() - f.rcvdBytes.Load())
		}
		f.waiting.Store(false)
	}
}

// drain waits until all that was sent arrived or nothing arrived for 200 ms.
func (f *flow) drain() {
	for f.rcvdBytes.Load() < f.sentBytes.Load() {
		if time.Since(time.Unix(0, f.lastRecv.Load())) > 200*time.Millisecond {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func benchLoopback(b *testing.B, size int, mode string) {
	rx := listen(b, loopback4, Config{DisableGRO: mode == "gso-nogro"})
	tx := listen(b, loopback4, Config{})
	f := &flow{room: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if mode == "writeto" {
			recvOneByOne(rx, f)
		} else {
			recvBatches(rx, f)
		}
	}()
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := time.Now()
	f.lastRecv.Store(start.UnixNano())
	var err error
	switch mode {
	case "writeto":
		err = sendOneByOne(tx, rx.LocalAddr(), size, b.N, f)
	default:
		err = sendBatches(tx, rx.LocalAddr(), size, b.N, mode != "batch", f)
	}
	if err != nil {
		b.Fatal(err)
	}
	f.drain()
	elapsed := time.Duration(f.lastRecv.Load() - start.UnixNano())
	b.StopTimer()
	rx.Close()
	<-done
	secs := max(elapsed.Seconds(), 1e-9)
	b.ReportMetric(float64(f.rcvdBytes.Load())/secs/1e9, "rx_GB/s")
	b.ReportMetric(float64(f.rcvdDatagrams.Load())/secs/1e6, "rx_Mpkt/s")
	b.ReportMetric(100*(1-float64(f.rcvdDatagrams.Load())/float64(b.N)), "loss_%")
}

func sendOneByOne(tx *Socket, to netip.AddrPort, size, count int, f *flow) error {
	buf := pattern(1, size)
	for range count {
		f.waitRoom()
		if _, err := tx.conn.WriteToUDPAddrPort(buf, to); err != nil {
			return err
		}
		f.sentBytes.Add(int64(size))
	}
	return nil
}

// sendBatches sends count datagrams of size bytes in batches of up to 64
// messages: single datagrams, or with gso trains of up to 64 KiB.
func sendBatches(tx *Socket, to netip.AddrPort, size, count int, gso bool, f *flow) error {
	perTrain := 1
	if gso {
		perTrain = min(MaxPayload/size, MaxSegments)
	}
	// A batch carries at most a quarter of the window, so that the
	// sender never stops long with a full window.
	ms := make([]Message, min(64, max(1, benchWindow/4/(perTrain*size))))
	payload := pattern(1, perTrain*size)
	for count > 0 {
		n, datagrams := 0, 0
		for ; n < len(ms) && count-datagrams > 0; n++ {
			k := min(perTrain, count-datagrams)
			ms[n] = Message{Buf: payload[:k*size], Addr: to, Segment: size}
			datagrams += k
		}
		f.waitRoom()
		if _, err := tx.WriteBatch(ms[:n]); err != nil {
			return err
		}
		f.sentBytes.Add(int64(datagrams * size))
		count -= datagrams
	}
	return nil
}

func recvOneByOne(rx *Socket, f *flow) {
	buf := make([]byte, ReadBufferSize)
	for {
		n, _, err := rx.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		f.received(n, 1)
	}
}

func recvBatches(rx *Socket, f *flow) {
	ms := make([]Message, 64)
	for i := range ms {
		ms[i].Buf = make([]byte, ReadBufferSize)
	}
	for {
		n, err := rx.ReadBatch(ms)
		if errors.Is(err, net.ErrClosed) {
			return
		} else if err != nil {
			panic(err)
		}
		bytes, datagrams := 0, 0
		for _, m := range ms[:n] {
			bytes += m.N
			datagrams++
			if m.Segment > 0 {
				datagrams = datagrams - 1 + (m.N+m.Segment-1)/m.Segment
			}
		}
		f.received(bytes, datagrams)
	}
}

// BenchmarkPingBatch writes 64 datagrams of 1452 bytes and reads them back
// on one goroutine: with -benchmem it shows the allocations per batch
// (none).
func BenchmarkPingBatch(b *testing.B) {
	rx := listen(b, loopback4, Config{})
	tx := listen(b, loopback4, Config{})
	ms := make([]Message, 64)
	for i := range ms {
		ms[i] = Message{Buf: pattern(i, 1452), Addr: rx.LocalAddr()}
	}
	in := readBuffers(64, ReadBufferSize)
	b.SetBytes(64 * 1452)
	b.ReportAllocs()
	for b.Loop() {
		pingBatch(b, tx, rx, ms, in, len(ms))
	}
}
