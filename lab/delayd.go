//go:build linux

package lab

import (
	"container/heap"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Limits of the delay daemon.
const (
	// delaydQueueMax is the most packets the kernel holds for one queue;
	// beyond it the kernel drops them.
	delaydQueueMax = 65536
	// delaydHeldMax is the most packets the daemon holds at once.
	delaydHeldMax = 1 << 20
	// delaydRcvBuf is the netlink socket's receive buffer.
	delaydRcvBuf = 32 << 20
	// delaydStep is the longest sleep between checks for due packets:
	// a packet with less jitter may fall due before the first one held.
	delaydStep = time.Millisecond
)

// DelaydMain runs the delay daemon, `gocoll lab delayd --config FILE`, and
// returns its exit status; args are those after "lab delayd". A test
// binary that starts labs with delay calls it from TestMain when
// [DelaydArgs] says its arguments ask for the daemon.
//
// The daemon binds the NFQUEUE queues that FILE lists in the current
// network namespace (the router's) and gives every packet that iptables
// queues there its verdict, ACCEPT, only after the queue's delay ± jitter:
// this kernel has no netem. Only packet metadata comes to userspace. It
// prints "delayd ready" once bound, re-reads FILE's delays on SIGHUP, and
// ends on SIGTERM or SIGINT.
func DelaydMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gocoll lab delayd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	conf := fs.String("config", "", "file of `QUEUE DELAY_US JITTER_US` lines")
	if err := fs.Parse(args); err != nil || *conf == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, errDelaydUsage)
		return 2
	}
	if err := runDelayd(*conf, stdout); err != nil {
		fmt.Fprintln(stderr, "gocoll lab delayd:", err)
		return 1
	}
	return 0
}

// testBinaryGuard comes first in the daemon's arguments when the
// executable is a test binary: one whose TestMain does not answer
// DelaydArgs then runs no test and exits, and Up reports that the daemon
// did not start, instead of the binary running its tests in a router.
const testBinaryGuard = "-test.run=^$"

// DelaydArgs says whether args (os.Args[1:]) ask for the delay daemon and
// returns the daemon's own arguments, for DelaydMain.
func DelaydArgs(args []string) ([]string, bool) {
	if len(args) > 0 && args[0] == testBinaryGuard {
		args = args[1:]
	}
	if len(args) >= 2 && args[0] == "lab" && args[1] == "delayd" {
		return args[2:], true
	}
	return nil, false
}

func readDelaydConfig(path string) (map[uint16]delaydQueue, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	qs, err := parseDelaydConfig(data)
	if err != nil {
		return nil, err
	}
	m := make(map[uint16]delaydQueue, len(qs))
	for _, q := range qs {
		m[q.Queue] = q
	}
	return m, nil
}

// delayd is the daemon's state.
type delayd struct {
	fd     int
	queues atomic.Pointer[map[uint16]delaydQueue]
	rng    *rand.Rand // reader goroutine only

	mu   sync.Mutex
	held heldPackets
	seq  uint64
	wake chan struct{}

	sendMu sync.Mutex // one verdict batch at a time on fd
	drops  atomic.Uint64
}

func runDelayd(conf string, stdout io.Writer) error {
	qs, err := readDelaydConfig(conf)
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		return fmt.Errorf("%s lists no queue", conf)
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return fmt.Errorf("netlink socket: %w", err)
	}
	d := &delayd{fd: fd, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid()))), wake: make(chan struct{}, 1)}
	d.queues.Store(&qs)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, delaydRcvBuf)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_NO_ENOBUFS, 1)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("netlink bind: %w", err)
	}
	seq := uint32(0)
	for q := range qs {
		for i, m := range configMsgs(q, delaydQueueMax, seq) {
			seq++
			if err := d.request(m, seq); err != nil && i < 3 { // the GSO flag is optional
				return fmt.Errorf("queue %d: %w", q, err)
			}
		}
	}
	fmt.Fprintln(stdout, delaydReadyLine)
	if f, ok := stdout.(*os.File); ok {
		_ = f.Close() // whoever waited for the line may stop reading
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	go d.release()
	errc := make(chan error, 1)
	go func() { errc <- d.read() }()
	for {
		select {
		case err := <-errc:
			return err
		case s := <-sigs:
			if s != syscall.SIGHUP {
				return nil
			}
			nq, err := readDelaydConfig(conf)
			if err != nil {
				fmt.Fprintln(os.Stderr, "gocoll lab delayd: reload:", err) // keeps the old delays
				continue
			}
			d.queues.Store(&nq) // queues not bound at start stay unbound
		}
	}
}

// request sends a configuration message and waits for its ACK.
func (d *delayd) request(msg []byte, seq uint32) error {
	if err := unix.Sendto(d.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(d.fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		msgs, _ := parseNlMsgs(buf[:n])
		for _, m := range msgs {
			if m.typ == unix.NLMSG_ERROR && m.seq == seq {
				return nlError(m)
			}
		}
	}
}

// read takes every packet message and holds it until its time (or drops
// it when too many are held).
func (d *delayd) read() error {
	buf := make([]byte, 1<<20)
	var drops []byte
	for {
		n, _, err := unix.Recvfrom(d.fd, buf, 0)
		if err == unix.EINTR || err == unix.ENOBUFS {
			continue
		}
		if err != nil {
			return fmt.Errorf("netlink receive: %w", err)
		}
		now := time.Now()
		msgs, _ := parseNlMsgs(buf[:n])
		qs := *d.queues.Load()
		added := false
		drops = drops[:0]
		d.mu.Lock()
		for _, m := range msgs {
			q, id, err := parsePacket(m)
			if err != nil {
				continue
			}
			if d.held.Len() >= delaydHeldMax {
				drops = appendVerdict(drops, q, id, nfDrop)
				d.drops.Add(1)
				continue
			}
			d.seq++
			heap.Push(&d.held, heldPacket{due: now.Add(d.delayOf(qs[q])), queue: q, id: id, seq: d.seq})
			added = true
		}
		d.mu.Unlock()
		d.send(drops)
		if added {
			select {
			case d.wake <- struct{}{}:
			default:
			}
		}
	}
}

// delayOf draws one packet's delay on queue q.
func (d *delayd) delayOf(q delaydQueue) time.Duration {
	delay := q.Delay
	if q.Jitter > 0 {
		delay += time.Duration(d.rng.Int64N(int64(2*q.Jitter)+1)) - q.Jitter
	}
	return max(delay, 0)
}

// release hands out the verdicts of the packets that fell due. Go's
// timers have about a millisecond's slack, so with packets held it sleeps
// with nanosleep(2) instead, at most delaydStep at a time.
func (d *delayd) release() {
	batch := make([]byte, 0, 64<<10)
	for {
		now := time.Now()
		batch = batch[:0]
		d.mu.Lock()
		for d.held.Len() > 0 && !d.held[0].due.After(now) && len(batch) < cap(batch)-verdictBytes {
			p := heap.Pop(&d.held).(heldPacket)
			batch = appendVerdict(batch, p.queue, p.id, nfAccept)
		}
		next := time.Duration(-1)
		if d.held.Len() > 0 {
			next = d.held[0].due.Sub(now)
		}
		d.mu.Unlock()
		d.send(batch)
		switch {
		case next < 0 && len(batch) == 0:
			<-d.wake
		case next > 0:
			ts := unix.NsecToTimespec(int64(min(next, delaydStep)))
			_ = unix.Nanosleep(&ts, nil)
		}
	}
}

func (d *delayd) send(b []byte) {
	if len(b) == 0 {
		return
	}
	d.sendMu.Lock()
	defer d.sendMu.Unlock()
	if err := unix.Sendto(d.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		fmt.Fprintln(os.Stderr, "gocoll lab delayd: verdicts:", err)
	}
}

// heldPacket is a packet waiting for its verdict.
type heldPacket struct {
	due   time.Time
	queue uint16
	id    uint32
	seq   uint64 // keeps packets due at once in arrival order
}

// heldPackets is a min-heap by due time, then arrival.
type heldPackets []heldPacket

func (h heldPackets) Len() int { return len(h) }
func (h heldPackets) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h heldPackets) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heldPackets) Push(x any)   { *h = append(*h, x.(heldPacket)) }
func (h *heldPackets) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
