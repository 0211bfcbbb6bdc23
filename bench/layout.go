package bench

// variant is one of nccl-tests' two measurements of every size.
type variant uint8

const (
	outOfPlace variant = iota
	inPlace
	numVariants
)

func (v variant) String() string {
	if v == inPlace {
		return "in-place"
	}
	return "out-of-place"
}

// buffers returns the send and receive slices of collective k at geometry
// g for this rank. Out of place they are prefixes of sendBuf and recvBuf; in
// place both lie in recvBuf, laid out as NCCL defines the in-place forms
// (AllGather sends its own block of the result, ReduceScatter receives into
// its own block of the input). Both buffers hold at least g.bytes.
func (k collKind) buffers(g geometry, ranks, rank int, v variant, sendBuf, recvBuf []byte) (send, recv []byte) {
	total := recvBuf[:g.bytes]
	own := func() []byte { return total[int64(rank)*g.block : int64(rank+1)*g.block] }
	switch {
	case v == inPlace && k == collAllGather:
		return own(), total
	case v == inPlace && k == collReduceScatter:
		return total, own()
	case v == inPlace:
		return total, total
	case k == collAllGather:
		return sendBuf[:g.block], total
	case k == collReduceScatter:
		return sendBuf[:g.bytes], recvBuf[:g.block]
	}
	return sendBuf[:g.bytes], total
}

// checker fills inputs and verifies outputs of one collective call.
type checker struct {
	kind  collKind
	pat   pattern
	codec codec
	ranks int
	rank  int
	root  int
	block int64 // elements per block (blocked collectives)
}

// prepare poisons the output and writes this rank's inputs (for Broadcast,
// only the root has inputs).
func (c checker) prepare(send, recv []byte) {
	poison(recv)
	if c.kind == collBroadcast && c.rank != c.root {
		return
	}
	c.codec.fill(send, func(j int64) int64 { return c.pat.input(c.rank, j) })
}

// wrong counts the elements of recv that differ from the expected result
// (none for a Reduce at a rank other than the root).
func (c checker) wrong(recv []byte) int64 {
	p, b := c.pat, max(c.block, 1)
	var want func(j int64) scalar
	switch c.kind {
	case collAllReduce:
		want = p.reduced
	case collReduce:
		if c.rank != c.root {
			return 0
		}
		want = p.reduced
	case collBroadcast:
		want = func(j int64) scalar { return exact(p.input(c.root, j)) }
	case collAllGather:
		want = func(j int64) scalar { return exact(p.input(int(j/b), j%b)) }
	case collReduceScatter:
		want = func(j int64) scalar { return p.reduced(int64(c.rank)*c.block + j) }
	case collAllToAll:
		want = func(j int64) scalar { return exact(p.input(int(j/b), int64(c.rank)*c.block+j%b)) }
	case collSendRecv:
		prev := (c.rank - 1 + c.ranks) % c.ranks
		want = func(j int64) scalar { return exact(p.input(prev, j)) }
	}
	return c.codec.countWrong(recv, want)
}

func exact(v int64) scalar { return scalar{num: v, den: 1} }
