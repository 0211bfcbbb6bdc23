//go:build linux

package shm_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// childEnv, when set, makes TestChildRank act as rank 1 of a two-rank world
// whose rank 0 is the test process that started it. Its value is the mode:
// childEcho, childHold or childBoard.
const childEnv = "GOCOLL_SHM_CHILD"

const (
	// childEcho receives a large and a small message and sends back each
	// with its SHA-256, then closes.
	childEcho = "echo"
	// childHold connects, says "ready" and then does nothing until its
	// stdin ends or it is killed.
	childHold = "hold"
	// childBoard runs two AllReduces with rank 0 (the board's set-up and
	// a call on the board), says "ready" and then holds as childHold.
	childBoard = "board"
)

// Lines the child writes on stdout, each followed by its argument.
const (
	lineAddr  = "addr "
	lineReady = "ready"
)

// Message sizes of the echo: one past the inline limit by megabytes, so it
// is copied with process_vm_readv, and one carried in its slot.
const (
	bigLen   = 3<<20 + 5
	smallLen = 7
)

// Tags of the cross-process messages.
var (
	tagBig       = xtag(0)
	tagSmall     = xtag(1)
	tagEchoBig   = xtag(2)
	tagEchoSmall = xtag(3)
	tagSumBig    = xtag(4)
	tagSumSmall  = xtag(5)
)

func xtag(seq uint32) transport.Tag {
	return transport.Tag{OpKey: transport.OpKey{Comm: 0x5eed, Op: 1}, Seq: seq}
}

// TestChildRank is the child process of the cross-process tests; run
// directly (without childEnv) it does nothing.
func TestChildRank(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := shm.Listen(shm.Config{Rank: 1, Size: 2})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s%s\n", lineAddr, l.Addr())
	in := bufio.NewReader(os.Stdin)
	parent, err := in.ReadString('\n')
	if err != nil {
		t.Fatalf("reading rank 0's address: %v", err)
	}
	ep, err := l.Connect(ctx, []string{strings.TrimSpace(parent), l.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ep.Close(); err != nil {
			t.Error(err)
		}
	}()
	switch mode {
	case childEcho:
		echoToParent(ctx, t, ep)
	case childHold:
		fmt.Println(lineReady)
		_, _ = io.Copy(io.Discard, in)
	case childBoard:
		boardTwice(ctx, t, ep)
		fmt.Println(lineReady)
		_, _ = io.Copy(io.Discard, in)
	default:
		t.Fatalf("%s=%q: unknown mode", childEnv, mode)
	}
}

// echoToParent receives tagBig and tagSmall from rank 0 and sends each back
// with its SHA-256.
func echoToParent(ctx context.Context, t *testing.T, ep transport.Endpoint) {
	big, small := make([]byte, bigLen), make([]byte, 64)
	rb, rs := ep.Recv(0, tagBig, big), ep.Recv(0, tagSmall, small)
	nb := waitOK(ctx, t, rb, "receive of the large message")
	ns := waitOK(ctx, t, rs, "receive of the small message")
	if nb != bigLen || ns != smallLen {
		t.Fatalf("received %d and %d bytes, want %d and %d", nb, ns, bigLen, smallLen)
	}
	sumBig, sumSmall := sha256.Sum256(big), sha256.Sum256(small[:ns])
	for _, r := range []transport.Request{
		ep.Send(0, tagEchoBig, big),
		ep.Send(0, tagEchoSmall, small[:ns]),
		ep.Send(0, tagSumBig, sumBig[:]),
		ep.Send(0, tagSumSmall, sumSmall[:]),
	} {
		waitOK(ctx, t, r, "echo")
	}
}

// waitOK waits for r, at most 20 s and no longer than ctx, and fails t if
// r fails.
func waitOK(ctx context.Context, t testing.TB, r transport.Request, what string) int {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	n, err := r.Wait(wctx)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return n
}

// childRank is a running child process: rank 1.
type childRank struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // its stdout, line by line; closed at its end
	stderr bytes.Buffer
}

// startChild starts this test binary as rank 1 in mode; ctx bounds its life.
func startChild(ctx context.Context, t *testing.T, mode string) *childRank {
	t.Helper()
	return startChildWith(ctx, t, mode, nil)
}

// startChildWith is startChild with the child's process attributes.
func startChildWith(ctx context.Context, t *testing.T, mode string, attr *syscall.SysProcAttr) *childRank {
	t.Helper()
	c := &childRank{lines: make(chan string, 64)}
	c.cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChildRank$", "-test.timeout=60s")
	c.cmd.Env = append(os.Environ(), childEnv+"="+mode)
	c.cmd.Stderr = &c.stderr
	c.cmd.SysProcAttr = attr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		if attr != nil && errors.Is(err, syscall.EPERM) {
			t.Skipf("cannot start a child with %+v here: %v", *attr, err)
		}
		t.Fatal(err)
	}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		c.wait()
	})
	return c
}

// expect returns the argument of the child's next stdout line that starts
// with prefix, skipping other lines (the test framework's own).
func (c *childRank) expect(ctx context.Context, t *testing.T, prefix string) string {
	t.Helper()
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("child ended before writing %q; stderr:\n%s", prefix, c.wait())
			}
			if arg, found := strings.CutPrefix(line, prefix); found {
				return arg
			}
		case <-ctx.Done():
			t.Fatalf("waiting for the child to write %q: %v", prefix, ctx.Err())
		}
	}
}

// wait reaps the child once its stdout has ended, and returns what it
// wrote on stderr and stdout after the lines already read.
func (c *childRank) wait() string {
	var rest strings.Builder
	for line := range c.lines {
		rest.WriteString(line + "\n")
	}
	if c.cmd.ProcessState == nil {
		_ = c.cmd.Wait()
	}
	return c.stderr.String() + rest.String()
}

// connectParent makes rank 0 of a world whose rank 1 is child.
func connectParent(ctx context.Context, t *testing.T, child *childRank) *shm.Endpoint {
	t.Helper()
	l, err := shm.Listen(shm.Config{Rank: 0, Size: 2})
	if err != nil {
		t.Fatal(err)
	}
	childAddr := child.expect(ctx, t, lineAddr)
	if _, err := fmt.Fprintln(child.stdin, l.Addr()); err != nil {
		t.Fatal(err)
	}
	ep, err := l.Connect(ctx, []string{l.Addr().String(), childAddr})
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("no permission to take a process's descriptors here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ep.Close() })
	return ep
}

// TestCrossProcessEcho sends a large and a small message to a child process
// and checks that both come back byte for byte, and that the child's
// checksums of what it received match.
func TestCrossProcessEcho(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	child := startChild(ctx, t, childEcho)
	ep := connectParent(ctx, t, child)
	if g := shm.GoschedEvery(ep); g != shm.SpinGoschedEveryAlone {
		t.Errorf("a world of two processes on this host: a spin hands over the P every %d polls, want %d", g, shm.SpinGoschedEveryAlone)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, bigLen)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	small := []byte("seven b")
	echoBig, echoSmall := make([]byte, bigLen+100), make([]byte, 64)
	var sumBig, sumSmall [sha256.Size]byte
	recvs := []transport.Request{
		ep.Recv(1, tagEchoBig, echoBig),
		ep.Recv(1, tagEchoSmall, echoSmall),
		ep.Recv(1, tagSumBig, sumBig[:]),
		ep.Recv(1, tagSumSmall, sumSmall[:]),
	}
	waitOK(ctx, t, ep.Send(1, tagBig, big), "send of the large message")
	waitOK(ctx, t, ep.Send(1, tagSmall, small), "send of the small message")
	var n [4]int
	for i, r := range recvs {
		n[i] = waitOK(ctx, t, r, fmt.Sprintf("receive %d from the child", i))
	}
	if n[0] != bigLen || !bytes.Equal(echoBig[:n[0]], big) {
		t.Errorf("large echo: %d bytes, equal %v; want %d equal bytes", n[0], bytes.Equal(echoBig[:n[0]], big), bigLen)
	}
	if n[1] != smallLen || !bytes.Equal(echoSmall[:n[1]], small) {
		t.Errorf("small echo: %q, want %q", echoSmall[:n[1]], small)
	}
	if sumBig != sha256.Sum256(big) || sumSmall != sha256.Sum256(small) {
		t.Errorf("the child's checksums differ from the messages sent")
	}
	if st := ep.Stats(); st.RendezvousSent != 1 || st.BytesCopied != bigLen {
		t.Errorf("stats %+v: want 1 rendezvous send and %d bytes copied", st, bigLen)
	}
	if err := ep.Close(); err != nil {
		t.Error(err)
	}
	out := child.wait()
	if !child.cmd.ProcessState.Success() {
		t.Errorf("child: %v\n%s", child.cmd.ProcessState, out)
	}
}

// TestCrossProcessPeerDeath kills the child while rank 0 has a receive
// from it and a large send to it posted: both fail with a PeerError.
func TestCrossProcessPeerDeath(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	child := startChild(ctx, t, childHold)
	ep := connectParent(ctx, t, child)
	child.expect(ctx, t, lineReady)

	recv := ep.Recv(1, tagSmall, make([]byte, 64))
	send := ep.Send(1, tagBig, make([]byte, 1<<20))
	for _, r := range []transport.Request{recv, send} {
		select {
		case <-r.Done():
			_, err := r.Wait(ctx)
			t.Fatalf("a request to an idle child completed: %v", err)
		default:
		}
	}
	if err := child.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]transport.Request{"receive": recv, "send": send} {
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := r.Wait(wctx)
		wcancel()
		var pe *transport.PeerError
		if !errors.As(err, &pe) || pe.Rank != 1 {
			t.Errorf("%s from the killed child: %v, want a *transport.PeerError for rank 1", name, err)
		}
	}
	var pe *transport.PeerError
	if _, err := ep.Send(1, tagSmall, []byte("late")).Wait(ctx); !errors.As(err, &pe) {
		t.Errorf("send after the child died: %v, want a *transport.PeerError", err)
	}
	child.wait()
	if ws, ok := child.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("child ended with %v, want SIGKILL", child.cmd.ProcessState)
	}
}

// TestOtherPIDNamespace starts rank 1 in a PID namespace of its own, as in
// a container of its own on the same kernel: its address is not on this
// rank's host for shared memory (so a launcher picks a network transport),
// and Connect to it fails at once, saying why.
func TestOtherPIDNamespace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	child := startChildWith(ctx, t, childHold, &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID})
	l, err := shm.Listen(shm.Config{Rank: 0, Size: 2})
	if err != nil {
		t.Fatal(err)
	}
	childAddr := child.expect(ctx, t, lineAddr)
	if l.SameHost(childAddr) {
		t.Fatalf("SameHost(%s) from %s: true, want false (other PID namespace)", childAddr, l.Addr())
	}
	_, err = l.Connect(ctx, []string{l.Addr().String(), childAddr})
	if err == nil || !strings.Contains(err.Error(), "PID namespace") {
		t.Fatalf("Connect to a rank in another PID namespace: %v, want an error naming the PID namespace", err)
	}
}
