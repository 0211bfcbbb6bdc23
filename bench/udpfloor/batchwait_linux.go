package main

import (
	"fmt"
	"net/netip"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr is struct mmsghdr of recvmmsg(2); Go pads it to its
// alignment as C does (64 bytes on amd64, 32 on 386).
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

// receiveBatched is the receiver of -batchwait: its sockets are opened
// with plain system calls and never given to Go's runtime poller, so an
// arriving datagram wakes nothing; one goroutine sleeps wait (a Go timer:
// an idle process's timer waits are whole milliseconds) and then reads
// every socket with non-blocking recvmmsg until it is empty, for dur.
// What it spends per datagram against the default receiver is what a
// wake-up per arrival (the runtime poller's) costs at that rate.
func receiveBatched(listen string, paths int, dur, wait time.Duration) error {
	base, err := netip.ParseAddrPort(listen)
	if err != nil {
		return err
	}
	if !base.Addr().Is4() {
		return fmt.Errorf("-batchwait: IPv4 only")
	}
	const batch = 16
	fds := make([]int, paths)
	for i := range fds {
		a, err := portAt(base, i)
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20) // udpio.DefaultSocketBuffer
		if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(a.Port()), Addr: a.Addr().As4()}); err != nil {
			return fmt.Errorf("bind %v: %w", a, err)
		}
		fds[i] = fd
	}
	hs := make([]mmsghdr, batch)
	iov := make([]unix.Iovec, batch)
	for i := range hs {
		b := make([]byte, 65536)
		iov[i].Base = &b[0]
		iov[i].SetLen(len(b))
		hs[i].hdr.Iov = &iov[i]
		hs[i].hdr.Iovlen = 1
	}
	start := time.Now()
	var n, bytes, wakes, reads int64
	for time.Since(start) < dur {
		time.Sleep(wait)
		wakes++
		for _, fd := range fds {
			for {
				k, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&hs[0])), batch, unix.MSG_DONTWAIT, 0, 0)
				reads++
				if e != 0 || int(k) <= 0 {
					break
				}
				for _, h := range hs[:k] {
					n++
					bytes += int64(h.n)
				}
				if int(k) < batch {
					break
				}
			}
		}
	}
	report("recv", n, bytes, time.Since(start))
	fmt.Printf("udpfloor recv batchwait=%v wakes=%d recvmmsg=%d\n", wait, wakes, reads)
	return nil
}

// nap sleeps d in a system call of its own: an idle Go timer's wait is
// whole milliseconds.
func nap(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_ = unix.Nanosleep(&ts, nil)
}
