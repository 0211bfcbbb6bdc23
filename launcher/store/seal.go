package store

import (
	"encoding/binary"
	"fmt"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// sealer tags the frames of one direction of a connection after its
// handshake. Frame i of the direction (i from 0, never sent) ends with the
// first tagBytes bytes of HMAC-SHA256 under the direction's session key of
// (i, the frame's body before the tag), as jobkey.Tagger computes it. A
// frame that is forged, altered, replayed, dropped or reordered fails the
// check at the receiver, since its number or its bytes differ. A sealer is
// not safe for concurrent use: each side's writes (and reads) are already
// serialized.
type sealer struct {
	tagger *jobkey.Tagger
	seq    uint64
	seqb   [8]byte
	sum    [jobkey.TagSize]byte
	// untagged (benchmarks only) sends and accepts frames without a tag.
	untagged bool
}

func newSealer(key []byte) *sealer { return &sealer{tagger: jobkey.NewTagger(key)} }

// sealFrame appends the tag of the whole frame in b[start:] (its length
// prefix included, then rewritten) and returns b.
func (s *sealer) sealFrame(b []byte, start int) ([]byte, error) {
	if !s.untagged {
		binary.BigEndian.PutUint64(s.seqb[:], s.seq)
		tag := s.tagger.Tag(s.sum[:0], s.seqb[:], b[start+frameLenBytes:])
		b = append(b, tag[:tagBytes]...)
	}
	s.seq++
	return finishFrame(b, start)
}

// open checks the tag at the end of a frame body and returns the body
// without it.
func (s *sealer) open(body []byte) ([]byte, error) {
	if s.untagged {
		s.seq++
		return body, nil
	}
	if len(body) < tagBytes {
		return nil, fmt.Errorf("%w: frame %d of %d bytes has no room for its tag", errBadTag, s.seq, len(body))
	}
	msg, tag := body[:len(body)-tagBytes], body[len(body)-tagBytes:]
	binary.BigEndian.PutUint64(s.seqb[:], s.seq)
	if !s.tagger.Verify(tag, s.seqb[:], msg) {
		return nil, fmt.Errorf("%w: frame %d", errBadTag, s.seq)
	}
	s.seq++
	return msg, nil
}
