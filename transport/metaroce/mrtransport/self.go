package mrtransport

import (
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// selfBox matches a rank's messages to itself without the network: a send
// waits until a receive with its tag is posted (or the other way round),
// and the one that comes second copies the message. Its queues hold only
// the requests the caller posted. It is used under the engine's lock.
type selfBox struct {
	sends, recvs map[transport.Tag][]*request
}

func newSelfBox() selfBox {
	return selfBox{sends: make(map[transport.Tag][]*request), recvs: make(map[transport.Tag][]*request)}
}

// post matches r with the oldest opposite request of its tag, or queues it.
func (b *selfBox) post(r *request) {
	mine, other := b.recvs, b.sends
	if r.isSend {
		mine, other = b.sends, b.recvs
	}
	if q := other[r.tag]; len(q) > 0 {
		o := q[0]
		q[0] = nil
		if len(q) == 1 {
			delete(other, r.tag)
		} else {
			other[r.tag] = q[1:]
		}
		if r.isSend {
			copyMessage(r, o)
		} else {
			copyMessage(o, r)
		}
		return
	}
	r.state = stateInCore
	mine[r.tag] = append(mine[r.tag], r)
}

// copyMessage copies a matched send into its receive and completes both.
func copyMessage(s, r *request) {
	n := len(s.buf)
	if n > len(r.buf) {
		s.complete(n, nil)
		r.complete(0, fmt.Errorf("mrtransport: %d-byte message to oneself into a %d-byte buffer: %w",
			n, len(r.buf), transport.ErrTruncated))
		return
	}
	copy(r.buf, s.buf)
	s.complete(n, nil)
	r.complete(n, nil)
}

// cancel takes r out of its queue and fails it with err.
func (b *selfBox) cancel(r *request, err error) {
	m := b.recvs
	if r.isSend {
		m = b.sends
	}
	q := m[r.tag]
	for i, x := range q {
		if x == r {
			q = append(q[:i:i], q[i+1:]...)
			if len(q) == 0 {
				delete(m, r.tag)
			} else {
				m[r.tag] = q
			}
			break
		}
	}
	r.complete(0, err)
}

// fail fails every queued request for which match holds with err.
func (b *selfBox) fail(match func(*request) bool, err error) {
	for _, m := range []map[transport.Tag][]*request{b.sends, b.recvs} {
		for tag, q := range m {
			keep := q[:0]
			for _, r := range q {
				if match(r) {
					r.complete(0, err)
				} else {
					keep = append(keep, r)
				}
			}
			if len(keep) == 0 {
				delete(m, tag)
			} else {
				clear(q[len(keep):])
				m[tag] = keep
			}
		}
	}
}
