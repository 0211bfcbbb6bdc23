package main

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr has the kernel's layout on every architecture: recvmmsg(2)
// writes entry i's length at i*SizeofMmsghdr+offsetof(msg_len), so a
// wrong size or offset reads the wrong bytes from the second datagram on
// (GOARCH=386: 36 bytes against the kernel's 32 before the padding went).
func TestMmsghdrLayout(t *testing.T) {
	var h mmsghdr
	var u unix.Mmsghdr
	if got := unsafe.Sizeof(h); got != unix.SizeofMmsghdr {
		t.Errorf("sizeof mmsghdr %d, want %d", got, unix.SizeofMmsghdr)
	}
	if got, want := unsafe.Offsetof(h.n), unsafe.Offsetof(u.Len); got != want {
		t.Errorf("offsetof n %d, want %d", got, want)
	}
}
