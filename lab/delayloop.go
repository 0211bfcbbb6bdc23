//go:build linux

package lab

import (
	"fmt"
	"os"
	"strconv"
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
	// delaydSlack is how far apart the loop's wake-ups may be while
	// packets are held, twice the most a release is early or late for
	// it (see forward); delaydSlackEnv (microseconds, on `lab up`)
	// changes it, up to delaydSlackMax.
	delaydSlack    = 100 * time.Microsecond
	delaydSlackEnv = "GOCOLL_DELAYD_SLACK_US"
	delaydSlackMax = time.Millisecond
	// delaydStampAge is the oldest kernel receive stamp believed.
	delaydStampAge = time.Second
)

// forward is the daemon's one loop, run by one real-time thread: it takes
// the packet messages the kernel queued, holds each until its time and
// gives the verdicts of those that fell due.
//
// A packet's arrival is the kernel's receive time (NFQA_TIMESTAMP: the
// lab queues packets in the FORWARD hook, where the router's receive
// stamp is still on them; see enableRxStamps), else the clock read after
// the message was received. With the kernel's stamps the loop need not
// wake when a packet arrives while others are held: it sleeps until the
// earliest falls due, at most d.hold (no packet arriving meanwhile falls
// due sooner), and reads what arrived then. Without them, or with nothing
// held, it waits in ppoll for the next message too.
//
// Releases share wake-ups: a wake-up gives the verdicts of every packet
// due within d.slack/2 after it, and wake-ups are at least d.slack apart
// while packets are held; so a packet is released at most d.slack/2
// early or late (plus the wake-up's own lateness), and the loop wakes at
// most once per d.slack however many packets flow.
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
	wait, withFd := time.Duration(0), true
	for {
		if wait > 0 {
			poll.wait(wait, withFd)
		}
		n, err := rx.recv(d.fd)
		if err != nil {
			return fmt.Errorf("netlink receive: %w", err)
		}
		wake := time.Now()
		if n > 0 {
			verdicts = d.take(rx, n, wake, verdicts)
		}
		edge := wake.Add(d.slack / 2)
		for len(d.held) > 0 && !d.held[0].due.After(edge) {
			if len(verdicts) > cap(verdicts)-verdictBytes {
				verdicts = d.sendVerdicts(verdicts)
			}
			p := d.held.pop()
			if d.trace != nil {
				d.trace.add(p, wake)
			}
			verdicts = appendVerdict(verdicts, p.queue, p.id, nfAccept)
		}
		verdicts = d.sendVerdicts(verdicts)
		wait, withFd = d.nextWait(n, wake, time.Now())
	}
}

// nextWait is how long forward waits after a wake-up at wake that read n
// messages, now, and whether a message arriving ends the wait.
func (d *delayd) nextWait(n int, wake, now time.Time) (time.Duration, bool) {
	switch {
	case n == delaydRecvBatch: // more may be queued: take them at once
		return 0, true
	case len(d.held) == 0:
		return delaydIdle, true
	}
	next := d.held[0].due
	if gap := wake.Add(d.slack); next.Before(gap) {
		next = gap
	}
	wait := min(next.Sub(now), delaydIdle)
	hold := time.Duration(d.hold.Load())
	// A hold shorter than the slack would wake the loop every hold while
	// packets are held (a delay of 2.05 ms with 2 ms of jitter: every
	// 50 µs); arrivals then wake it instead.
	if !d.stamped || hold <= 0 || hold < d.slack {
		return max(wait, 0), true
	}
	return max(min(wait, hold-now.Sub(wake)), 0), false
}

// take holds the first n packet messages of rx, read at now, and appends
// a DROP verdict to verdicts for each beyond delaydHeldMax.
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
			p, err := parsePacket(m)
			if err != nil {
				continue
			}
			if len(d.held) >= delaydHeldMax {
				if len(verdicts) > cap(verdicts)-verdictBytes {
					verdicts = d.sendVerdicts(verdicts)
				}
				verdicts = appendVerdict(verdicts, p.queue, p.id, nfDrop)
				d.drops.Add(1)
				continue
			}
			arrive, ok := arrival(p.stamp, now)
			d.stamped = ok
			d.seq++
			d.held.push(heldPacket{due: arrive.Add(d.delayOf(qs[p.queue])), queue: p.queue, id: p.id, seq: d.seq, arrive: arrive, hdr: traceHeader(p.payload)})
		}
	}
	return verdicts
}

// arrival is the arrival time of a packet read at now with the kernel's
// stamp (on now's monotonic clock), and whether the stamp was used: not
// when it is zero or more than delaydStampAge before or 1 ms after now
// (another clock, or a clock step).
func arrival(stamp, now time.Time) (time.Time, bool) {
	if stamp.IsZero() {
		return now, false
	}
	age := now.Sub(stamp) // wall clocks: stamp has no monotonic reading
	if age < -time.Millisecond || age > delaydStampAge {
		return now, false
	}
	return now.Add(-max(age, 0)), true
}

// setQueues makes qs the daemon's queues and sets d.hold: the least delay
// less jitter of the queues that delay (no packet arriving now falls due
// sooner); 0 if one may have no delay.
func (d *delayd) setQueues(qs map[uint16]delaydQueue) {
	hold := delaydIdle
	for _, q := range qs {
		if q.Delay > 0 || q.Jitter > 0 {
			hold = min(hold, q.Delay-q.Jitter)
		}
	}
	d.hold.Store(int64(max(hold, 0)))
	d.queues.Store(&qs)
}

// delaydSlackFromEnv reads delaydSlackEnv (microseconds), bounded by
// delaydSlackMax; delaydSlack where it is not set.
func delaydSlackFromEnv() (time.Duration, error) {
	v := os.Getenv(delaydSlackEnv)
	if v == "" {
		return delaydSlack, nil
	}
	us, err := strconv.ParseUint(v, 10, 32)
	if err != nil || time.Duration(us)*time.Microsecond > delaydSlackMax {
		return 0, fmt.Errorf("%s=%q: want 0 to %d microseconds", delaydSlackEnv, v, delaydSlackMax.Microseconds())
	}
	return time.Duration(us) * time.Microsecond, nil
}

// enableRxStamps opens a socket that asks for receive timestamps, which
// turns on the kernel's stamping of every received packet (a switch of
// the whole kernel, on while any such socket is open), so that NFQUEUE
// passes each packet's receive time. The caller closes it at the end.
func enableRxStamps() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
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

// wait returns once d has passed, a signal arrived or, withFd, fd is
// readable.
func (p *pollState) wait(d time.Duration, withFd bool) {
	p.ts = unix.NsecToTimespec(int64(d))
	p.fd.Revents = 0
	nfds := uintptr(0)
	if withFd {
		nfds = 1
	}
	_, _, _ = unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&p.fd)), nfds, uintptr(unsafe.Pointer(&p.ts)), 0, 0, 0)
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
