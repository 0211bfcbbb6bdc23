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
// it), counted in transport.Stats.AuthDropped. Payloads are not tagged.
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
}

type frameKey struct {
	aead  cipher.AEAD
	n     uint64 // frames so far
	nonce [12]byte
	tag   [tagLen]byte
}

// newFrameAuth derives a connection's keys; dialer says which side this
// is.
func newFrameAuth(k jobkey.Key, dialer bool, dialNonce, acceptNonce []byte, from, to, index int) *frameAuth {
	var ids [12]byte
	binary.BigEndian.PutUint32(ids[0:], uint32(from))
	binary.BigEndian.PutUint32(ids[4:], uint32(to))
	binary.BigEndian.PutUint32(ids[8:], uint32(index))
	key := k.Derive(jobkey.PurposeTCP, []byte("frames"), dialNonce, acceptNonce, ids[:])
	toAcc, toDial := newGCM(key[:16]), newGCM(key[16:])
	if dialer {
		return &frameAuth{send: frameKey{aead: toAcc}, recv: frameKey{aead: toDial}}
	}
	return &frameAuth{send: frameKey{aead: toDial}, recv: frameKey{aead: toAcc}}
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
	binary.BigEndian.PutUint64(k.nonce[4:], k.n)
	return k.nonce[:]
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
	lk.auth = newFrameAuth(m.cfg.Key, true, nonce, theirs, m.cfg.Rank, peer, index)
	return nil
}

// checkDialProof, on the accepting side, reads and checks the dialer's
// proof and sets lk's keys.
func (m *mesher) checkDialProof(nc net.Conn, dialHello, mine, dialNonce, nonce []byte, lk *link) error {
	got := make([]byte, proofLen)
	if _, err := io.ReadFull(nc, got); err != nil || !proofOK(got, proof(m.hk, "dial", dialHello, mine, dialNonce, nonce)) {
		m.countRefused()
		return fmt.Errorf("%w: %w: rank %d did not prove the job key", ErrRefused, ErrAuth, lk.peer)
	}
	lk.auth = newFrameAuth(m.cfg.Key, false, dialNonce, nonce, lk.peer, m.cfg.Rank, lk.index)
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
