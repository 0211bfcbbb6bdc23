package shm

import (
	"fmt"
	"strconv"
	"strings"
)

// addrPrefix starts every shm address; the number is the format's version.
const addrPrefix = "shm2:"

// Addr is what one rank publishes so that its peers can reach its segment:
// the kernel and PID namespace it runs in, its process and the descriptors
// of its segment and doorbell, and a nonce that the segment repeats (so a
// descriptor number that means something else in that process is refused).
type Addr struct {
	BootID  string // /proc/sys/kernel/random/boot_id of the rank's kernel
	PIDNS   uint64 // inode of the rank's PID namespace (/proc/self/ns/pid)
	PID     int    // in that namespace
	MemFD   int
	EventFD int
	Nonce   uint64
}

// String is the address in the form ParseAddr reads.
func (a Addr) String() string {
	return fmt.Sprintf("%s%s:%d:%d:%d:%d:%016x", addrPrefix, a.BootID, a.PIDNS, a.PID, a.MemFD, a.EventFD, a.Nonce)
}

// ParseAddr reads an address written by Addr.String.
func ParseAddr(s string) (Addr, error) {
	rest, ok := strings.CutPrefix(s, addrPrefix)
	if !ok {
		return Addr{}, fmt.Errorf("shm: address %q does not start with %q", s, addrPrefix)
	}
	f := strings.Split(rest, ":")
	if len(f) != 6 {
		return Addr{}, fmt.Errorf("shm: address %q: want 6 fields after %q", s, addrPrefix)
	}
	var a Addr
	if !validBootID(f[0]) {
		return Addr{}, fmt.Errorf("shm: address %q: bad boot id", s)
	}
	a.BootID = f[0]
	ns, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil || ns == 0 {
		return Addr{}, fmt.Errorf("shm: address %q: bad PID namespace %q", s, f[1])
	}
	a.PIDNS = ns
	ints := []*int{&a.PID, &a.MemFD, &a.EventFD}
	for i, p := range ints {
		v, err := strconv.ParseInt(f[2+i], 10, 32)
		if err != nil || v < 0 || (i == 0 && v == 0) {
			return Addr{}, fmt.Errorf("shm: address %q: bad field %q", s, f[2+i])
		}
		*p = int(v)
	}
	if len(f[5]) != 16 {
		return Addr{}, fmt.Errorf("shm: address %q: nonce must be 16 hex digits", s)
	}
	n, err := strconv.ParseUint(f[5], 16, 64)
	if err != nil {
		return Addr{}, fmt.Errorf("shm: address %q: bad nonce", s)
	}
	a.Nonce = n
	if a.String() != s {
		return Addr{}, fmt.Errorf("shm: address %q is not written as %q", s, a.String())
	}
	return a, nil
}

// validBootID accepts the lowercase hexadecimal and dashes of a boot id.
func validBootID(s string) bool {
	if len(s) < 8 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}
