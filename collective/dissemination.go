package collective

// Rooted operations as disseminations: see broadcast.go.

// topDistance is the largest power of two below n (n >= 2): the
// disseminations' first round's distance. Their rounds go farthest first,
// d = topDistance(n), ..., 2, 1, as a binomial tree from the root: where
// ranks are numbered site by site, the data crosses between sites in the
// first rounds, from few ranks, and the last rounds stay near.
func topDistance(n int) int {
	d := 1
	for 2*d < n {
		d <<= 1
	}
	return d
}

// broadcastDissemination spreads buf in ceil(log2 n) rounds: in the round
// of distance d (d = topDistance(n), ..., 2, 1) rank r sends to r+d and
// receives from r-d (mod n), as in a dissemination barrier. Counting from
// the root (v = r-root mod n), the ranks with v a multiple of 2d hold the
// data before that round, so the message from v carries buf when v%(2d)
// == 0 and v+d < n, and is empty otherwise; v receives buf in the round
// where v%(2d) == d. The data moves as in a binomial tree (what the cost
// model prices: tune's binomial). Each rank sends its round's message only
// once its previous round's message arrived and its header matched, so
// after the last round every rank has heard, through a chain of checked
// messages, from every other (the distances' subset sums cover 0..n-1): a
// rank that found a mismatch sends nothing more, and every rank that
// depends on it waits until its abort comes. As many data messages (n-1)
// and rounds as a binomial tree, and no confirming round after; each
// message travels with its header when buf is at most inlineBytesMax.
// In steady state (eager.go) a rank waits only for the message that
// carries its data, and a forwarder for its data sends that did not
// travel with its header (they read buf); the rest is settled later.
func (c *Comm) broadcastDissemination(o *operation, buf []byte, root int) error {
	n := c.Size()
	v := mod(c.rank-root, n)
	var fwd [8]pendingSend // an eager forwarder's sends from buf (ceil(log2 n) - 1 at most)
	held := fwd[:0]
	for d := topDistance(n); d > 0; d >>= 1 {
		var in, out []byte
		if v%(2*d) == d {
			in = buf
		}
		if v%(2*d) == 0 && v+d < n {
			out = buf
		}
		to := mod(c.rank+d, n)
		pr := o.recv(mod(c.rank-d, n), in)
		if o.eager && v != 0 && o.holdsBuffer(to, out) {
			held = append(held, pendingSend{o.send(to, out), to})
		} else {
			o.send(to, out)
		}
		if o.eager && in == nil { // not this rank's data: settled later
			continue
		}
		if err := o.waitRecv(pr); err != nil {
			return err
		}
	}
	return waitAll(o, held)
}

// scatterDissemination runs a Scatter in the rounds of broadcastDissemination
// (farthest first). Counting from the root (v = r-root mod n), a rank with v
// a multiple of 2d holds, before the round of distance d, the blocks of
// v, v+1, ..., min(v+2d, n)-1, packed from the start of its scratch; it
// sends v+d the upper part of them (v+d, ..., those v+d is to hold from
// then on) when v+d < n, and keeps the lower part; every other message is
// empty. A rank receives once, before any send of data, and sends from its
// scratch only after that, so the sends need no copy. Each block travels
// at most ceil(log2 n) times, as in a binomial scatter, and, as in the
// dissemination Broadcast, every rank's completion depends on every other
// rank's checked messages: no confirming round. send is the root's buffer
// (nil elsewhere); recv, this rank's block, has already been filled at the
// root.
func (c *Comm) scatterDissemination(o *operation, send, recv []byte, root int) error {
	n, bs := c.Size(), len(recv)
	v := mod(c.rank-root, n)
	haveLease := c.tempBuffer(n * bs)
	have := haveLease.buf // blocks v, v+1, ... from have[0]
	if v == 0 && o.eagerReturn(n*bs) {
		// Steady state: the root returns once send is copied into have,
		// which the operation holds until it is settled (eager.go).
		o.eagerLease = haveLease
	} else {
		defer haveLease.release()
	}
	if v == 0 {
		for m := range n { // relative order
			p := (m + root) % n
			copy(have[m*bs:], send[p*bs:(p+1)*bs])
		}
	}
	var inline [8]pendingSend
	sends := inline[:0] // sent from have: waited for before it goes back
	for d := topDistance(n); d > 0; d >>= 1 {
		var in, msg []byte
		if v%(2*d) == d {
			in = have[:(min(v+d, n)-v)*bs]
		}
		if v%(2*d) == 0 && v+d < n {
			msg = have[d*bs : (min(v+2*d, n)-v)*bs]
		}
		pr := o.recv(mod(c.rank-d, n), in)
		to := mod(c.rank+d, n)
		sends = append(sends, pendingSend{o.send(to, msg), to})
		if o.eager {
			continue
		}
		if err := o.waitRecv(pr); err != nil {
			return err
		}
	}
	if o.eager {
		return nil // settleDeferred waits for the sends from have
	}
	if v != 0 {
		copy(recv, have[:bs])
	}
	return waitAll(o, sends)
}

// waitAll waits for the disseminations' sends before their scratch goes
// back to the communicator (another operation may be lent it at once).
// On every error path (a failed receive or send, here or in the rounds)
// the operation has failed through o.fail, which cancels every request it
// posted, and Cancel returns only once the transport no longer touches
// the buffer: no send from the scratch is in flight when it goes back
// (TestDisseminationFailureReleasesScratchLast).
func waitAll(o *operation, sends []pendingSend) error {
	for i := range sends {
		if err := sends[i].wait(o); err != nil {
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
	var inline [8]pendingSend
	sends := inline[:0] // sent from have: waited for before it goes back
	for d := 1; d < n; d <<= 1 {
		k := min(d, n-d) // blocks each way this round
		pr := o.recv(mod(c.rank+d, n), have[d*bs:(d+k)*bs])
		to := mod(c.rank-d, n)
		sends = append(sends, pendingSend{o.send(to, have[:k*bs]), to})
		if err := o.waitRecv(pr); err != nil {
			return err
		}
	}
	if err := waitAll(o, sends); err != nil {
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
