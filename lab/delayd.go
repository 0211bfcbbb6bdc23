//go:build linux

package lab

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"strconv"
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
	// delaydIdle is the longest wait of the daemon's loop.
	delaydIdle = 10 * time.Millisecond
	// delaydPriority is the SCHED_FIFO priority of the daemon's loop
	// thread (see realtime).
	delaydPriority = 10
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
	hold   atomic.Int64 // ns no packet arriving now falls due within (setQueues)
	slack  time.Duration
	// stamped says the last packets read carried the kernel's receive
	// time (forward's goroutine only).
	stamped bool
	// rng, held and seq belong to the loop's goroutine (forward).
	rng   *rand.Rand
	held  heldPackets
	seq   uint64
	drops atomic.Uint64
	trace *delaydTrace // nil unless GOCOLL_DELAYD_TRACE is set
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
	d := &delayd{fd: fd, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))}
	d.setQueues(qs)
	if d.slack, err = delaydSlackFromEnv(); err != nil {
		return err
	}
	d.trace = newDelaydTrace()
	if ts, err := enableRxStamps(); err == nil {
		defer unix.Close(ts)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, delaydRcvBuf)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_NO_ENOBUFS, 1)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("netlink bind: %w", err)
	}
	seq := uint32(0)
	for q := range qs {
		for i, m := range configMsgs(q, delaydQueueMax, seq, d.trace != nil) {
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
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	errc := make(chan error, 1)
	go func() { errc <- d.forward() }()
	for {
		select {
		case err := <-errc:
			return err
		case s := <-sigs:
			if s == syscall.SIGUSR1 {
				if d.trace != nil {
					if err := d.trace.write(); err != nil {
						fmt.Fprintln(os.Stderr, "gocoll lab delayd: trace:", err)
					}
				}
				continue
			}
			if s != syscall.SIGHUP {
				return nil
			}
			nq, err := readDelaydConfig(conf)
			if err != nil {
				fmt.Fprintln(os.Stderr, "gocoll lab delayd: reload:", err) // keeps the old delays
				continue
			}
			d.setQueues(nq) // queues not bound at start stay unbound
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

// delayOf draws one packet's delay on queue q.
func (d *delayd) delayOf(q delaydQueue) time.Duration {
	delay := q.Delay
	if q.Jitter > 0 {
		delay += time.Duration(d.rng.Int64N(int64(2*q.Jitter)+1)) - q.Jitter
	}
	return max(delay, 0)
}

// realtime locks the calling goroutine to its thread and makes that a
// real-time thread (SCHED_FIFO, delaydPriority), so that the daemon
// stamps and releases packets on time on a loaded machine: a link does
// not hold packets longer because its host is busy. As an ordinary thread,
// among the processes of a lab on 2 loaded cores, the daemon released late by
// 6-10 ms at the 99th percentile and up to 90 ms (GOCOLL_DELAYD_TRACE),
// which the transports saw as queueing delay and as bursts. Where the
// policy cannot be set (no CAP_SYS_NICE) it says so on stderr and goes on
// as an ordinary thread.
//
// The process's other threads become real-time too, one priority below
// (threads created later inherit it from their creator): Go's sysmon
// preempts a goroutine that runs 10 ms without a break, and a locked
// goroutine then waits until another thread of the scheduler hands its
// thread back; as an ordinary thread that one waited for the busy cores.
func (d *delayd) realtime(name string) {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: delaydPriority}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		fmt.Fprintf(os.Stderr, "gocoll lab delayd: %s thread not real-time: %v\n", name, err)
		return
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		fmt.Fprintf(os.Stderr, "gocoll lab delayd: other threads not real-time: %v\n", err)
		return
	}
	self := unix.Gettid()
	others := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: delaydPriority - 1}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil && tid != self {
			_ = unix.SchedSetAttr(tid, &others, 0) // a thread that ended meanwhile
		}
	}
}

// heldPacket is a packet waiting for its verdict.
type heldPacket struct {
	due   time.Time
	queue uint16
	id    uint32
	seq   uint64 // keeps packets due at once in arrival order
	// arrive and hdr are kept for a trace only.
	arrive time.Time
	hdr    traceHdr
}

// heldPackets is a min-heap by due time, then arrival. It is typed
// rather than a container/heap, whose interface boxes every packet: the
// daemon allocates nothing per packet, so that the garbage collector,
// whose stops wait on threads that are not real-time, seldom runs.
type heldPackets []heldPacket

func (h heldPackets) less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}

func (h *heldPackets) push(p heldPacket) {
	*h = append(*h, p)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

// pop removes and returns the earliest packet; h must not be empty.
func (h *heldPackets) pop() heldPacket {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < len(q) && q.less(l, small) {
			small = l
		}
		if r := l + 1; r < len(q) && q.less(r, small) {
			small = r
		}
		if small == i {
			break
		}
		q[i], q[small] = q[small], q[i]
		i = small
	}
	*h = q
	return top
}
