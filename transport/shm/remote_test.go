//go:build linux

package shm

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestReadRemoteCalls: readRemote copies a message of several system calls
// (maxRemoteRead each, the last one short) whole and in order, each call
// proving the process with the nonce; a wrong nonce is errExited, and an
// address the process has not mapped an error, not a crash; the hook
// runs after each system call (a balancer notes there, chunkHook).
func TestReadRemoteCalls(t *testing.T) {
	src := make([]byte, 2*maxRemoteRead+4093)
	for i := range src {
		src[i] = byte(i*131 + i>>12)
	}
	nonce := uint64(0x1122334455667788)
	addr := func(p unsafe.Pointer) uint64 { return uint64(uintptr(p)) }
	var proof [8]byte
	dst := make([]byte, len(src))
	if err := readRemote(os.Getpid(), dst, bufAddr(src), addr(unsafe.Pointer(&nonce)), nonce, &proof, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst, src) {
		t.Fatal("the copy differs from the source")
	}
	clear(dst)
	calls := 0
	if err := readRemote(os.Getpid(), dst, bufAddr(src), addr(unsafe.Pointer(&nonce)), nonce, &proof, func() { calls++ }); err != nil || !bytes.Equal(dst, src) {
		t.Fatalf("with a hook: %v; equal %v", err, bytes.Equal(dst, src))
	}
	if calls != 3 {
		t.Fatalf("the hook ran %d times, want 3: once after each system call", calls)
	}
	clear(dst)
	if err := readRemote(os.Getpid(), dst, bufAddr(src), 0, 0, &proof, nil); err != nil || !bytes.Equal(dst, src) {
		t.Fatalf("without a nonce: %v; equal %v", err, bytes.Equal(dst, src))
	}
	if err := readRemote(os.Getpid(), dst, bufAddr(src), addr(unsafe.Pointer(&nonce)), nonce+1, &proof, nil); !errors.Is(err, errExited) {
		t.Fatalf("wrong nonce: %v, want errExited", err)
	}
	if err := readRemote(os.Getpid(), dst[:64], 4096, 0, 0, &proof, nil); !errors.Is(err, unix.EFAULT) {
		t.Fatalf("unmapped source: %v, want EFAULT", err)
	}
}
