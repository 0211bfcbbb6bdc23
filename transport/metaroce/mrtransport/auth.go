package mrtransport

import (
	"net/netip"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// mayRefuse reports whether the core may refuse datagram d, so that
// answerRefusals must follow it: only a HELLO makes a refusal (one without
// the job key, or with another). Polling for refusals after every datagram
// cost a WAN receiver 1.2-1.7 % of its CPU samples (perf record of a p2p in
// the two-site lab, bench/results/wan_overhead.md, session 21).
func mayRefuse(d []byte) bool {
	h, err := wire.PeekHeader(d)
	return err == nil && h.Type == wire.TypeHello
}

// answerRefusals sends the core's refusals of the datagram just handled
// (HELLOs without the job key: metaroce.Endpoint.PollRefusal) back to
// addr, where it came from, in the pending batch; when the batch is full
// they are dropped (the refused side then fails at its idle timeout). The
// caller holds mu.
func (e *engine) answerRefusals(path int, addr netip.AddrPort) {
	for {
		if e.pending == nil {
			e.pending = e.newBatch()
		}
		b := e.pending
		if b.n == len(b.bufs) {
			b.bufs = append(b.bufs, make([]byte, e.maxDatagram))
		}
		tx, ok := e.core.PollRefusal(b.bufs[b.n])
		if !ok {
			return
		}
		if b.n >= e.batch || tx.Path != path || !addr.IsValid() {
			e.st.noRoute.Add(1)
			continue
		}
		b.byPath[path] = append(b.byPath[path], Message{Buf: b.bufs[b.n], N: tx.N, Addr: addr})
		b.n++
	}
}
