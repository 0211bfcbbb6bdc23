package collective

import "github.com/gocoll/gocoll/transport"

// Rooted operations as disseminations: see broadcast.go.

// scatterDissemination runs a Scatter in the rounds of broadcastDissemination:
// in round j (d = 2^j) rank r sends to r+d and receives from r-d (mod n).
// Counting from the root (v = r-root mod n), a rank v < d holds, before
// round j, the blocks of the ranks v, v+d, v+2d, ... (below n), packed in
// that order; in round j it sends v+d the odd ones of them (v+d, v+3d, ...:
// those v+d is to hold from then on) when v+d < n, and keeps the even ones;
// every other message is empty. So each block travels at most ceil(log2 n)
// times and, as in the dissemination Broadcast, every rank's completion
// depends on every other rank's checked messages: no confirming round.
// send is the root's buffer (nil elsewhere); recv, this rank's block, has
// already been filled at the root.
func (c *Comm) scatterDissemination(o *operation, send, recv []byte, root int) error {
	n, bs := c.Size(), len(recv)
	v := mod(c.rank-root, n)
	haveLease, outLease := c.tempBuffer(n*bs), c.tempBuffer(n*bs)
	defer haveLease.release()
	defer outLease.release()
	have, out := haveLease.buf, outLease.buf // out: every round's sends, in turn
	if v == 0 {
		for m := range n { // relative order
			p := (m + root) % n
			copy(have[m*bs:], send[p*bs:(p+1)*bs])
		}
	}
	held := func(v, d int) int { return (n - v + d - 1) / d } // blocks v, v+d, ... below n
	var inline [8]transport.Request
	sends := inline[:0] // sent from out: waited for before it goes back
	for d := 1; d < n; d <<= 1 {
		var in, msg []byte
		if v >= d && v < 2*d {
			in = have[:held(v, 2*d)*bs]
		}
		if v < d && v+d < n {
			k := held(v, d)
			msg, out = out[:(k/2)*bs], out[(k/2)*bs:]
			for m := 1; m < k; m += 2 { // odd positions go, even ones stay
				copy(msg[(m/2)*bs:], have[m*bs:(m+1)*bs])
				copy(have[(m/2+1)*bs:], have[(m+1)*bs:min(m+2, k)*bs])
			}
		}
		pr := o.recv(mod(c.rank-d, n), in)
		sends = append(sends, o.send(mod(c.rank+d, n), msg))
		if err := o.waitRecv(pr); err != nil {
			return err
		}
	}
	if v != 0 {
		copy(recv, have[:bs])
	}
	return o.waitSends(sends, +1)
}

// waitSends waits for the disseminations' sends, round j's to rank
// r+dir*2^j, before their scratch goes back to the communicator (another
// operation may be lent it at once).
func (o *operation) waitSends(sends []transport.Request, dir int) error {
	n := o.c.Size()
	for j, r := range sends {
		if err := o.wait(r, mod(o.c.rank+dir*(1<<j), n)); err != nil {
			return err
		}
	}
	return nil
}

// gatherDissemination runs a Gather as a dissemination all-gather (Bruck's):
// in round j (d = 2^j) rank r sends to r-d and receives from r+d (mod n).
// Counting from the root (v = r-root mod n), rank v holds before round j
// the blocks of v, v+1, ..., v+min(d, n)-1, packed in that order; it sends
// r-d the first min(d, n-d) of them and appends as many from r+d. After
// the last round every rank holds every block, and the root copies them
// into recv. Every rank receives n-1 blocks, not one, so the communicator
// runs it only while all of them fit in one header's message; then every
// message costs what an empty one does, and, as in the dissemination
// Broadcast, every rank's completion depends on every other rank's
// checked messages: no confirming round. recv is the root's (nil
// elsewhere).
func (c *Comm) gatherDissemination(o *operation, send, recv []byte, root int) error {
	n, bs := c.Size(), len(send)
	haveLease := c.tempBuffer(n * bs)
	defer haveLease.release()
	have := haveLease.buf
	copy(have, send)
	var inline [8]transport.Request
	sends := inline[:0] // sent from have: waited for before it goes back
	for d := 1; d < n; d <<= 1 {
		k := min(d, n-d) // blocks each way this round
		pr := o.recv(mod(c.rank+d, n), have[d*bs:(d+k)*bs])
		sends = append(sends, o.send(mod(c.rank-d, n), have[:k*bs]))
		if err := o.waitRecv(pr); err != nil {
			return err
		}
	}
	if err := o.waitSends(sends, -1); err != nil {
		return err
	}
	if recv != nil {
		for m := range n {
			p := (m + root) % n
			copy(recv[p*bs:(p+1)*bs], have[m*bs:(m+1)*bs])
		}
	}
	return nil
}
