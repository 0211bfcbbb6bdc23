package main

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"

	"golang.org/x/sys/unix"
)

// capture keeps the last datagrams sent to ports [lo, hi] on loopback
// but from port own (the sprayer's), read from an AF_PACKET socket
// (root).
type capture struct {
	mu    sync.Mutex
	dgs   [][]byte
	ports []int
	n     int
}

const keep = 4096

func newCapture(lo, hi, own int) *capture {
	c := &capture{}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM, int(htons(unix.ETH_P_IP)))
	if err != nil {
		return c // not root: random datagrams only
	}
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, _, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				return
			}
			b := buf[:n]
			if n < 28 || b[0]>>4 != 4 || b[9] != unix.IPPROTO_UDP {
				continue
			}
			ihl := int(b[0]&15) * 4
			if n < ihl+8 {
				continue
			}
			sport, dport := int(binary.BigEndian.Uint16(b[ihl:])), int(binary.BigEndian.Uint16(b[ihl+2:]))
			if dport < lo || dport > hi || sport == own || n == ihl+8 {
				continue
			}
			c.add(append([]byte(nil), b[ihl+8:]...), dport)
		}
	}()
	return c
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (c *capture) add(d []byte, port int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if len(c.dgs) < keep {
		c.dgs, c.ports = append(c.dgs, d), append(c.ports, port)
		return
	}
	i := c.n % keep
	c.dgs[i], c.ports[i] = d, port
}

// pick returns a captured datagram and the port it went to.
func (c *capture) pick(rng *rand.Rand) ([]byte, int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.dgs) == 0 {
		return nil, 0, false
	}
	i := rng.IntN(len(c.dgs))
	return c.dgs[i], c.ports[i], len(c.dgs[i]) > 0
}

func (c *capture) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
