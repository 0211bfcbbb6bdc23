package tcp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// Authentication, with Config.Key. The hellos carry a flag (reserved
// byte 14, bit 0) saying the sender holds a key; a dialer's hello is
// followed by its nonce, the acceptor's reply hello by its nonce and its
// proof (an HMAC-SHA256 tag, cut to 16 bytes, under a key derived from the
// job key, of both hellos and both nonces); the dialer checks it and
// sends its own proof, which the acceptor checks. So each side proves it
// holds the key with the other's fresh nonce, and the key never goes on
// the wire. A side with a key refuses a peer without one, and the other
// way round, with a reason; a proof that does not verify fails the dial
// (ErrRefused: no retry) or the accepted connection (its refusal named
// when Connect gives up).
//
// Every frame then carries, after its header, a 16-byte tag: an AES-GCM
// tag (GMAC) over the header under the connection's key for its
// direction (AES-128, derived from the job key, both nonces, both ranks
// and the connection index), with the frame's number on the connection
// as nonce, which is not sent: TCP keeps frames in order, so a replayed,
// dropped or reordered frame breaks the count and fails the tag. A frame
// whose tag does not verify fails the connection (a stream cannot skip
// it), counted in transport.Stats.AuthDropped. Bodies are sent as
// Config.Payload says (the higher of the two hellos' modes, bits 1-2 of
// byte 14): in clear, followed by a GMAC tag of their own, or encrypted
// with AES-GCM (its tag after them), with the frame's number as nonce too.
const (
	helloKeyed = 1 // hello byte 14: the sender holds a key
	nonceLen   = jobkey.NonceSize
	proofLen   = 16
	tagLen     = 16
)

// handshakeKey is the key the hello proofs are made with.
func handshakeKey(k jobkey.Key) []byte { return k.Derive(jobkey.PurposeTCP, []byte("handshake")) }

// proof returns side's proof ("dial" or "accept") of the handshake: both
// hellos as sent and both nonces.
func proof(hk []byte, side string, dialHello, acceptHello, dialNonce, acceptNonce []byte) []byte {
	t := jobkey.Tag(hk, []byte(side), dialHello, acceptHello, dialNonce, acceptNonce)
	return t[:proofLen]
}

func proofOK(got, want []byte) bool { return hmac.Equal(got, want) }

// frameAuth tags one connection's frames. send is used by the writer
// goroutine only, recv by the reader only.
type frameAuth struct {
	send, recv frameKey
	payload    PayloadMode
}

type frameKey struct {
	aead    cipher.AEAD
	n       uint64 // frames so far
	nonce   [12]byte
	tag     [tagLen]byte
	scratch []byte // a body's ciphertext (PayloadEncrypted, PayloadTagged discards)
}

// newFrameAuth derives a connection's keys; dialer says which side this
// is.
func newFrameAuth(k jobkey.Key, payload PayloadMode, dialer bool, dialNonce, acceptNonce []byte, from, to, index int) *frameAuth {
	var ids [12]byte
	binary.BigEndian.PutUint32(ids[0:], uint32(from))
	binary.BigEndian.PutUint32(ids[4:], uint32(to))
	binary.BigEndian.PutUint32(ids[8:], uint32(index))
	key := k.Derive(jobkey.PurposeTCP, []byte("frames"), dialNonce, acceptNonce, ids[:])
	toAcc, toDial := newGCM(key[:16]), newGCM(key[16:])
	if dialer {
		return &frameAuth{send: frameKey{aead: toAcc}, recv: frameKey{aead: toDial}, payload: payload}
	}
	return &frameAuth{send: frameKey{aead: toDial}, recv: frameKey{aead: toAcc}, payload: payload}
}

func newGCM(key []byte) cipher.AEAD {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic("tcp: " + err.Error()) // 16 bytes always make an AES key
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		panic("tcp: " + err.Error())
	}
	return g
}

func (k *frameKey) next() []byte {
	k.n++
	k.nonce[0] = 0
	binary.BigEndian.PutUint64(k.nonce[4:], k.n)
	return k.nonce[:]
}

// bodyNonce is the nonce of the body of the frame whose header next
// numbered last.
func (k *frameKey) bodyNonce() []byte {
	k.nonce[0] = 1
	return k.nonce[:]
}

// writeBody writes a frame's body (after its header's tag) to w as the
// payload mode wants it: as is, then its tag, or encrypted.
func (a *frameAuth) writeBody(w io.Writer, body []byte) error {
	k := &a.send
	if len(body) == 0 || a.payload == PayloadClear {
		_, err := w.Write(body)
		return err
	}
	if a.payload == PayloadTagged {
		if _, err := w.Write(body); err != nil {
			return err
		}
		_, err := w.Write(k.aead.Seal(k.tag[:0], k.bodyNonce(), nil, body))
		return err
	}
	k.scratch = k.aead.Seal(k.scratch[:0], k.bodyNonce(), body, nil)
	_, err := w.Write(k.scratch)
	return err
}

// readBody reads a frame's body from r into b as the payload mode sent
// it, checking its tag; the error wraps ErrAuth for a tag that does not
// verify.
func (a *frameAuth) readBody(r io.Reader, b []byte) error {
	k := &a.recv
	if len(b) == 0 || a.payload == PayloadClear {
		_, err := io.ReadFull(r, b)
		return err
	}
	var err error
	if a.payload == PayloadTagged {
		if _, err = io.ReadFull(r, b); err == nil {
			if _, err = io.ReadFull(r, k.tag[:]); err == nil {
				var none [0]byte
				_, err = k.aead.Open(none[:0], k.bodyNonce(), k.tag[:], b)
				err = authErr(err)
			}
		}
		return err
	}
	k.scratch = append(k.scratch[:0], make([]byte, len(b)+tagLen)...)
	if _, err = io.ReadFull(r, k.scratch); err == nil {
		_, err = k.aead.Open(b[:0], k.bodyNonce(), k.scratch, nil)
		err = authErr(err)
	}
	return err
}

// authErr turns a failed Open into the frame's error.
func authErr(err error) error {
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w: a frame's body does not verify", errProtocol, ErrAuth)
	}
	return err
}

// seal appends the next frame's tag over hdr (a whole header) to hdr.
func (a *frameAuth) seal(hdr []byte) []byte {
	k := &a.send
	return k.aead.Seal(hdr, k.next(), nil, hdr)
}

// readTag reads the tag that follows a header from r and checks it over
// hdr; the error wraps errProtocol.
func (a *frameAuth) readTag(r io.Reader, hdr []byte) error {
	k := &a.recv
	if _, err := io.ReadFull(r, k.tag[:]); err != nil {
		return err
	}
	var none [0]byte
	if _, err := k.aead.Open(none[:0], k.next(), k.tag[:], hdr); err != nil {
		return fmt.Errorf("%w: %w: a frame's tag does not verify (tampered with, or not from the peer)", errProtocol, ErrAuth)
	}
	return nil
}

// ErrAuth is wrapped by the errors of a handshake or a frame that did not
// prove the job key (with ErrRefused for a handshake).
var ErrAuth = errors.New("tcp: authentication failed")

// keysMatch refuses a hello whose sender holds a key when this side has
// none, or the other way round.
func (m *mesher) keysMatch(got hello) error {
	switch {
	case got.keyed && m.hk == nil:
		return fmt.Errorf("%w: %w: rank %d holds a job key and this rank none (GOCOLL_JOB_KEY)", ErrRefused, ErrAuth, got.from)
	case !got.keyed && m.hk != nil:
		m.countRefused()
		return fmt.Errorf("%w: %w: rank %d holds no job key", ErrRefused, ErrAuth, got.from)
	}
	return nil
}

func (m *mesher) countRefused() {
	m.mu.Lock()
	m.refused++
	m.mu.Unlock()
}

// proveDial, on the dialing side, checks the acceptor's proof (auth: its
// nonce and proof), sends this side's and sets lk's keys.
func (m *mesher) proveDial(nc net.Conn, peer, index int, got hello, mine, raw, auth, nonce []byte, lk *link) error {
	if !got.keyed {
		return fmt.Errorf("%w: %w: rank %d holds no job key", ErrRefused, ErrAuth, peer)
	}
	theirs := auth[:nonceLen]
	if !proofOK(auth[nonceLen:], proof(m.hk, "accept", mine, raw, nonce, theirs)) {
		m.countRefused()
		return fmt.Errorf("%w: %w: rank %d holds another job key (its proof does not verify)", ErrRefused, ErrAuth, peer)
	}
	if _, err := nc.Write(proof(m.hk, "dial", mine, raw, nonce, theirs)); err != nil {
		return fmt.Errorf("sending the handshake's proof: %w", err)
	}
	lk.auth = newFrameAuth(m.cfg.Key, max(m.payloadFor(peer), got.payload), true, nonce, theirs, m.cfg.Rank, peer, index)
	return nil
}

// checkDialProof, on the accepting side, reads and checks the dialer's
// proof and sets lk's keys.
func (m *mesher) checkDialProof(nc net.Conn, payload PayloadMode, dialHello, mine, dialNonce, nonce []byte, lk *link) error {
	got := make([]byte, proofLen)
	if _, err := io.ReadFull(nc, got); err != nil || !proofOK(got, proof(m.hk, "dial", dialHello, mine, dialNonce, nonce)) {
		m.countRefused()
		return fmt.Errorf("%w: %w: rank %d did not prove the job key", ErrRefused, ErrAuth, lk.peer)
	}
	lk.auth = newFrameAuth(m.cfg.Key, max(m.payloadFor(lk.peer), payload), false, dialNonce, nonce, lk.peer, m.cfg.Rank, lk.index)
	return nil
}

// sealed returns header hdr with its tag appended, if the connection is
// authenticated.
func (c *conn) sealed(hdr []byte) []byte {
	if c.auth == nil {
		return hdr
	}
	return c.auth.seal(hdr)
}

// payloadFor is the payload mode this side asks for with peer.
func (m *mesher) payloadFor(peer int) PayloadMode {
	p := m.cfg.Payload
	if f := m.cfg.PeerPayload; f != nil {
		p = max(p, min(f(peer), PayloadEncrypted))
	}
	return p
}

// writeBody writes a frame's body as the connection wants it.
func (c *conn) writeBody(body []byte) error {
	if c.auth == nil {
		_, err := c.bw.Write(body)
		return err
	}
	return c.auth.writeBody(c.bw, body)
}
