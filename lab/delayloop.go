//go:build linux

package lab

import (
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Limits of the daemon's loop.
const (
	// delaydRecvBatch is the most packet messages one recvmmsg takes.
	delaydRecvBatch = 256
	// delaydRecvSize is the buffer of one packet message: metadata (and,
	// tracing, traceCopyRange bytes of the packet) take about 150.
	delaydRecvSize = 1024
	// delaydVerdictBuf bounds the verdicts sent in one system call.
	delaydVerdictBuf = 64 << 10
)

// forward is the daemon's one loop, run by one real-time thread: it takes
// the packet messages the kernel queued, holds each until its time and
// gives the verdicts of those that fell due. It wakes only when a packet
// arrives or the earliest held one falls due (ppoll with that deadline, at
// most delaydIdle): the arrival and the release are stamped with the clock
// read as the wake-up ends, as precise as the wake-up itself.
//
// Per wake-up it makes at most three system calls, whatever the number of
// packets: one ppoll, one recvmmsg that takes every queued message (up to
// delaydRecvBatch), one sendto that carries every verdict due.
//
// It never parks its goroutine and makes only raw system calls: a locked
// real-time goroutine that parks (on a channel, a contended mutex, a
// system call the runtime sees, whose P sysmon retakes) runs again only
// when an ordinary thread of the Go scheduler hands it back its thread,
// which on a loaded machine took up to 130 ms. A loop that the runtime
// sees as always running also keeps sysmon at its slowest period (10 ms)
// instead of 20 µs, which cost more CPU than the packets did when the
// reader blocked in read(2) and the releaser slept apart.
func (d *delayd) forward() error {
	d.realtime("forwarder")
	rx := newNlBatch(delaydRecvBatch, delaydRecvSize)
	verdicts := make([]byte, 0, delaydVerdictBuf)
	poll := &pollState{fd: unix.PollFd{Fd: int32(d.fd), Events: unix.POLLIN}}
	wait := time.Duration(0)
	for {
		if wait > 0 {
			poll.wait(wait)
		}
		n, err := rx.recv(d.fd)
		if err != nil {
			return fmt.Errorf("netlink receive: %w", err)
		}
		now := time.Now()
		if n > 0 {
			verdicts = d.take(rx, n, now, verdicts)
		}
		for len(d.held) > 0 && !d.held[0].due.After(now) {
			if len(verdicts) > cap(verdicts)-verdictBytes {
				verdicts = d.sendVerdicts(verdicts)
			}
			p := d.held.pop()
			if d.trace != nil {
				d.trace.add(p, now)
			}
			verdicts = appendVerdict(verdicts, p.queue, p.id, nfAccept)
		}
		verdicts = d.sendVerdicts(verdicts)
		switch {
		case n == delaydRecvBatch: // more may be queued: take them at once
			wait = 0
		case len(d.held) > 0:
			wait = min(d.held[0].due.Sub(time.Now()), delaydIdle)
			if wait <= 0 {
				wait = 0
			}
		default:
			wait = delaydIdle
		}
	}
}

// take holds the first n packet messages of rx, arrived at now, and
// appends a DROP verdict to verdicts for each beyond delaydHeldMax.
func (d *delayd) take(rx *nlBatch, n int, now time.Time, verdicts []byte) []byte {
	qs := *d.queues.Load()
	for i := range n {
		b := rx.msg(i)
		for len(b) > 0 {
			m, rest, err := nextNlMsg(b)
			if err != nil {
				break
			}
			b = rest
			q, id, payload, err := parsePacket(m)
			if err != nil {
				continue
			}
			if len(d.held) >= delaydHeldMax {
				if len(verdicts) > cap(verdicts)-verdictBytes {
					verdicts = d.sendVerdicts(verdicts)
				}
				verdicts = appendVerdict(verdicts, q, id, nfDrop)
				d.drops.Add(1)
				continue
			}
			d.seq++
			d.held.push(heldPacket{due: now.Add(d.delayOf(qs[q])), queue: q, id: id, seq: d.seq, arrive: now, hdr: traceHeader(payload)})
		}
	}
	return verdicts
}

// sendVerdicts sends the verdicts in b to the kernel in one system call
// and returns b emptied.
func (d *delayd) sendVerdicts(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	if _, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(d.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "gocoll lab delayd: verdicts:", errno)
	}
	return b[:0]
}

// pollState is ppoll's arguments, kept so that a wait allocates nothing.
type pollState struct {
	fd unix.PollFd
	ts unix.Timespec
}

// wait returns once fd is readable, d has passed or a signal arrived.
func (p *pollState) wait(d time.Duration) {
	p.ts = unix.NsecToTimespec(int64(d))
	p.fd.Revents = 0
	_, _, _ = unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&p.fd)), 1, uintptr(unsafe.Pointer(&p.ts)), 0, 0, 0)
}

// nlBatch is recvmmsg's buffers: up to len(hs) datagrams of size bytes
// each, allocated once.
type nlBatch struct {
	hs   []unix.Mmsghdr
	iovs []unix.Iovec
	buf  []byte
	size int
}

func newNlBatch(n, size int) *nlBatch {
	b := &nlBatch{hs: make([]unix.Mmsghdr, n), iovs: make([]unix.Iovec, n), buf: make([]byte, n*size), size: size}
	for i := range b.hs {
		b.iovs[i].Base = &b.buf[i*size]
		b.iovs[i].SetLen(size)
		b.hs[i].Hdr.Iov = &b.iovs[i]
		b.hs[i].Hdr.SetIovlen(1)
	}
	return b
}

// recv takes the datagrams queued on fd without waiting and returns how
// many; none when nothing is queued or a signal interrupted it. A socket
// overrun (ENOBUFS: the kernel dropped messages) is not an error.
func (b *nlBatch) recv(fd int) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.hs[0])), uintptr(len(b.hs)), unix.MSG_DONTWAIT, 0, 0)
	switch errno {
	case 0:
		return int(n), nil
	case unix.EAGAIN, unix.EINTR, unix.ENOBUFS:
		return 0, nil
	}
	return 0, errno
}

// msg returns datagram i of the last recv (cut to its buffer if the
// kernel truncated it: the packet header comes first).
func (b *nlBatch) msg(i int) []byte {
	return b.buf[i*b.size:][:min(int(b.hs[i].Len), b.size)]
}
