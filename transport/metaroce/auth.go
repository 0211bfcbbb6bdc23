package metaroce

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// AuthMode is how a connection's packets are authenticated. A connection
// uses the higher of its two sides' modes for it.
//
// With a key (AuthConfig.Key), the handshake proves that both sides hold
// it: the HELLO carries the initiator's fresh nonce and an HMAC-SHA256
// proof under a key derived from the job key; the HELLO-ACK the
// acceptor's nonce and a proof over it and the initiator's nonce, which
// only a holder of the key can make for that HELLO. An endpoint with a key
// refuses a HELLO without a valid proof with a CLOSE (wire.CloseAuth)
// that echoes the HELLO's nonce, and the initiator fails at once with
// ErrAuth; an initiator whose HELLO-ACK does not verify drops it (counted)
// and fails with ErrAuth at its IdleTimeout. Both sides then derive the
// connection's two keys (one per direction, AES-128) from the job key,
// both nonces, both node ids and both connection ids, and every later
// packet carries a wire trailer: an AES-GCM tag and a per-path packet
// number, its nonce. A receiver drops a packet whose tag does not verify
// (EndpointStats.DropAuth) and one whose packet number it has already
// seen or that lies replayWindow or more below the highest seen on its
// path (DropReplay). The acceptor hears the initiator's proof of the key
// in its first authenticated packet (its keys involve the acceptor's
// nonce).
type AuthMode uint8

// Authentication modes.
const (
	// AuthNone: no key, packets carry no tag (single-host runs, tests).
	AuthNone AuthMode = iota
	// AuthHeader tags every byte of a packet but a DATA payload, which
	// only the CRC32C guards: the default with a key. It keeps off-path
	// senders out: they can neither inject nor replay a packet.
	AuthHeader
	// AuthFull tags every byte (GOCOLL_AUTH=full). DATA payloads are then
	// copied into the datagram buffer (no gathering write) and not read
	// into place.
	AuthFull
	// AuthEncrypt encrypts everything after a packet's 12-byte header with
	// AES-GCM (GOCOLL_ENCRYPT), with AuthFull's copies.
	AuthEncrypt
)

func (m AuthMode) String() string {
	switch m {
	case AuthNone:
		return "none"
	case AuthHeader:
		return "header"
	case AuthFull:
		return "full"
	case AuthEncrypt:
		return "encrypt"
	}
	return fmt.Sprintf("AuthMode(%d)", uint8(m))
}

// AuthConfig configures authentication (see AuthMode).
type AuthConfig struct {
	// Key is the job's key; the zero Key (default) means no
	// authentication: then Mode and PeerMode must be unset, and a peer
	// with a key refuses this endpoint's HELLOs.
	Key jobkey.Key
	// Mode is the mode asked for every connection, AuthHeader (default)
	// to AuthEncrypt.
	Mode AuthMode
	// PeerMode, if set, gives the mode asked for a connection with the
	// node id peer (for example AuthEncrypt for a peer at another site);
	// a result below Mode counts as Mode.
	PeerMode func(peer uint64) AuthMode
	// Rand is where handshake nonces come from; default crypto/rand.
	Rand io.Reader
}

// ErrAuth fails a connection whose handshake did not prove the job key.
var ErrAuth = errors.New("metaroce: authentication failed")

// replayWindow is how far below the highest packet number received on a
// path a packet may arrive and still be accepted (once).
const replayWindow = 2048

// withDefaults checks and completes a.
func (a AuthConfig) withDefaults() (AuthConfig, error) {
	if a.Key.IsZero() {
		if a.Mode != AuthNone || a.PeerMode != nil {
			return a, fmt.Errorf("%w: Auth.Mode %v without a key", ErrConfig, a.Mode)
		}
		return a, nil
	}
	if a.Mode == AuthNone {
		a.Mode = AuthHeader
	}
	if a.Mode > AuthEncrypt {
		return a, fmt.Errorf("%w: Auth.Mode %v", ErrConfig, a.Mode)
	}
	if a.Rand == nil {
		a.Rand = rand.Reader
	}
	return a, nil
}

// modeFor returns the mode this endpoint asks for with peer.
func (e *Endpoint) modeFor(peer uint64) AuthMode {
	m := e.cfg.Auth.Mode
	if f := e.cfg.Auth.PeerMode; f != nil {
		m = max(m, min(f(peer), AuthEncrypt))
	}
	return m
}

func (e *Endpoint) keyed() bool { return !e.cfg.Auth.Key.IsZero() }

// newNonce returns a fresh handshake nonce, zero without a key.
func (e *Endpoint) newNonce() ([wire.NonceLen]byte, error) {
	var n [wire.NonceLen]byte
	if !e.keyed() {
		return n, nil
	}
	if _, err := io.ReadFull(e.cfg.Auth.Rand, n[:]); err != nil {
		return n, fmt.Errorf("metaroce: handshake nonce: %w", err)
	}
	return n, nil
}

// helloProof returns the proof of HELLO or HELLO-ACK h (its Proof field
// left out): the tag of its encoding under the endpoint's handshake key and,
// for a HELLO-ACK, of the answered HELLO's nonce echo.
func (e *Endpoint) helloProof(h *wire.Hello, echo []byte) [wire.NonceLen]byte {
	proof := h.Proof
	h.Proof = [wire.NonceLen]byte{}
	e.helloBuf = wire.AppendHello(e.helloBuf[:0], h)
	h.Proof = proof
	t := jobkey.Tag(e.helloKey, e.helloBuf[:len(e.helloBuf)-wire.CRCLen], echo)
	var p [wire.NonceLen]byte
	copy(p[:], t[:])
	return p
}

// helloProven reports whether h (a parsed HELLO or HELLO-ACK) carries a
// valid proof.
func (e *Endpoint) helloProven(h *wire.Hello, echo []byte) bool {
	want := e.helloProof(h, echo)
	return h.Auth != uint8(AuthNone) && hmac.Equal(h.Proof[:], want[:])
}

// refuse answers a HELLO that did not prove the key with a CLOSE
// (CloseAuth) echoing its nonce, for PollRefusal.
func (e *Endpoint) refuse(path int, h *wire.Hello) {
	e.st.DropAuth++
	if len(e.refusals) < maxRefusals {
		e.refusals = append(e.refusals, pendingClose{peer: h.Node, conn: h.Src, path: uint8(path), code: wire.CloseAuth, echo: h.Nonce})
	}
}

// maxRefusals bounds the refusals waiting for PollRefusal.
const maxRefusals = 64

// PollRefusal writes into buf (at least Config.MaxDatagram long) the next
// answer to a HELLO this endpoint refused for its key, a CLOSE
// (wire.CloseAuth) that lets a sender with another key, or none, fail at
// once with ErrAuth. It goes back to the address the HELLO came from,
// which only the driver knows (a HELLO names a node id anyone can claim):
// so call it after each HandleDatagram, until it returns false. Transmit
// has Peer, Path and N set; at most 64 refusals wait, later ones are
// dropped (counted in DropAuth all the same).
func (e *Endpoint) PollRefusal(buf []byte) (Transmit, bool) {
	if len(e.refusals) == 0 || len(buf) < e.cfg.MaxDatagram {
		return Transmit{}, false
	}
	pc := e.refusals[0]
	e.refusals = append(e.refusals[:0], e.refusals[1:]...)
	out := wire.AppendClose(buf[:0], &wire.Close{Conn: pc.conn, Path: pc.path, Code: pc.code, Echo: pc.echo})
	return Transmit{Peer: pc.peer, Path: int(pc.path), N: len(out)}, true
}

// refusedErr is the error of a connection whose HELLO the peer refused.
func (e *Endpoint) refusedErr(peer uint64) error {
	if !e.keyed() {
		return fmt.Errorf("%w: peer %d requires a job key and this endpoint has none (GOCOLL_JOB_KEY)", ErrAuth, peer)
	}
	return fmt.Errorf("%w: peer %d refused this endpoint's job key (it has another, or none)", ErrAuth, peer)
}

// connAuth is an authenticated connection's keys and packet numbers.
type connAuth struct {
	mode       AuthMode
	send, recv cipher.AEAD
	sendDir    byte     // the nonce's first byte for packets sent; recv's is 1-sendDir
	sendPN     []uint64 // by path: the last packet number sent
	win        []*replayWin
	nonce      [12]byte
	aad        []byte // scratch for a header tag's two parts
}

// newConnAuth derives an authenticated connection's keys. ini and acc are
// the initiator's and the acceptor's (nonce, node id, connection id).
func newConnAuth(key jobkey.Key, mode AuthMode, paths int, initiator bool, ini, acc authSide) *connAuth {
	k := key.Derive(jobkey.PurposeMetaRoCE, []byte("conn"), ini.bytes(), acc.bytes())
	toAcc, toIni := newGCM(k[:16]), newGCM(k[16:32])
	a := &connAuth{mode: mode, sendPN: make([]uint64, paths), win: make([]*replayWin, paths)}
	if initiator {
		a.send, a.recv = toAcc, toIni
	} else {
		a.send, a.recv, a.sendDir = toIni, toAcc, 1
	}
	return a
}

// authSide is one side's part of a connection's key derivation.
type authSide struct {
	nonce      [wire.NonceLen]byte
	node, conn uint64
}

func (s authSide) bytes() []byte {
	b := append([]byte(nil), s.nonce[:]...)
	b = binary.BigEndian.AppendUint64(b, s.node)
	return binary.BigEndian.AppendUint64(b, s.conn)
}

func newGCM(key []byte) cipher.AEAD {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic("metaroce: " + err.Error()) // 16 bytes always make an AES key
	}
	g, err := cipher.NewGCM(b)
	if err != nil {
		panic("metaroce: " + err.Error())
	}
	return g
}

// nonceOf returns the GCM nonce of packet number pn on path in direction
// dir.
func (a *connAuth) nonceOf(dir byte, path int, pn uint64) []byte {
	a.nonce[0], a.nonce[1] = dir, byte(path)
	binary.BigEndian.PutUint64(a.nonce[4:], pn)
	return a.nonce[:]
}

// seal appends the trailer to packet p (a whole packet, CRC included),
// sent on path, encrypting it in place with AuthEncrypt; p must have room
// for wire.TrailerLen more bytes. gathered says that p is a DATA packet's
// head, piggybacked ACK body (if any) and CRC, its payload sent from
// elsewhere (AuthHeader only; wire.AppendDataSplit).
func (a *connAuth) seal(path int, p []byte, gathered bool) []byte {
	a.sendPN[path]++
	pn := a.sendPN[path]
	nonce := a.nonceOf(a.sendDir, path, pn)
	switch a.mode {
	case AuthHeader:
		var aad []byte
		if gathered {
			aad = p[:len(p)-wire.CRCLen]
		} else {
			x, y, err := wire.HeaderCovered(p)
			if err != nil {
				panic("metaroce: sealing a malformed packet: " + err.Error())
			}
			aad = x
			if len(y) > 0 {
				a.aad = append(append(a.aad[:0], x...), y...)
				aad = a.aad
			}
		}
		p = a.send.Seal(p, nonce, nil, aad)
	case AuthFull:
		p = a.send.Seal(p, nonce, nil, p)
	default: // AuthEncrypt
		body := p[wire.HeaderLen:]
		p = p[:wire.HeaderLen+len(a.send.Seal(body[:0], nonce, body, p[:wire.HeaderLen]))]
	}
	return wire.AppendPN(p, pn)
}

// open checks datagram b's trailer (b arrived on path) and returns the
// packet it carries, decrypted in place with AuthEncrypt, or the drop
// counter to bump.
func (a *connAuth) open(st *EndpointStats, path int, b []byte) ([]byte, *int64) {
	p, tag, pn, err := wire.SplitTrailer(b)
	if err != nil {
		return nil, &st.DropAuth
	}
	w := a.win[path]
	if w == nil {
		w = &replayWin{}
		a.win[path] = w
	}
	if !w.fresh(pn) {
		return nil, &st.DropReplay
	}
	nonce := a.nonceOf(1-a.sendDir, path, pn)
	switch a.mode {
	case AuthHeader:
		x, y, herr := wire.HeaderCovered(p)
		if herr != nil {
			return nil, &st.DropAuth
		}
		if len(y) > 0 {
			a.aad = append(append(a.aad[:0], x...), y...)
			x = a.aad
		}
		err = a.verify(nonce, tag, x)
	case AuthFull:
		err = a.verify(nonce, tag, p)
	default:
		ct := b[wire.HeaderLen : len(b)-wire.PNLen]
		var pt []byte
		pt, err = a.recv.Open(ct[:0], nonce, ct, b[:wire.HeaderLen])
		p = b[:wire.HeaderLen+len(pt)]
	}
	if err != nil {
		return nil, &st.DropAuth
	}
	w.mark(pn)
	return p, nil
}

// openParts is open for a DATA packet read in parts (AuthHeader only):
// it checks the trailer at the end of tail and returns tail without it.
func (a *connAuth) openParts(st *EndpointStats, path int, head, tail []byte) ([]byte, *int64) {
	if a.mode != AuthHeader || len(tail) < wire.CRCLen+wire.TrailerLen {
		return nil, &st.DropAuth
	}
	n := len(tail) - wire.TrailerLen
	tag, pn := tail[n:n+wire.TagLen], binary.BigEndian.Uint64(tail[n+wire.TagLen:])
	w := a.win[path]
	if w == nil {
		w = &replayWin{}
		a.win[path] = w
	}
	if !w.fresh(pn) {
		return nil, &st.DropReplay
	}
	aad := head
	if ack := tail[:n-wire.CRCLen]; len(ack) > 0 {
		a.aad = append(append(a.aad[:0], head...), ack...)
		aad = a.aad
	}
	if a.verify(a.nonceOf(1-a.sendDir, path, pn), tag, aad) != nil {
		return nil, &st.DropAuth
	}
	w.mark(pn)
	return tail[:n], nil
}

// verify checks a GMAC tag over aad.
func (a *connAuth) verify(nonce, tag, aad []byte) error {
	var scratch [0]byte
	_, err := a.recv.Open(scratch[:0], nonce, tag, aad)
	return err
}

// replayWin remembers which packet numbers arrived on one path: the
// highest, and a bitmap of the replayWindow below it.
type replayWin struct {
	top  uint64
	bits [replayWindow / 64]uint64
}

// fresh reports whether pn may be accepted: not 0, not seen, and within
// the window.
func (w *replayWin) fresh(pn uint64) bool {
	switch {
	case pn == 0:
		return false
	case pn > w.top:
		return true
	case w.top-pn >= replayWindow:
		return false
	}
	return w.bits[pn/64%(replayWindow/64)]&(1<<(pn%64)) == 0
}

// mark records pn (which fresh accepted) as seen.
func (w *replayWin) mark(pn uint64) {
	if pn > w.top {
		if pn-w.top >= replayWindow {
			w.bits = [replayWindow / 64]uint64{}
		} else {
			for s := w.top + 1; s < pn; s++ {
				w.bits[s/64%(replayWindow/64)] &^= 1 << (s % 64)
			}
		}
		w.top = pn
	}
	w.bits[pn/64%(replayWindow/64)] |= 1 << (pn % 64)
}

// unseal checks the trailer of datagram b, arrived on path, if its
// connection is authenticated, and returns the packet it carries (or the
// drop counter to bump). HELLOs and HELLO-ACKs carry proofs instead;
// before its keys, a connection of a keyed endpoint takes a CLOSE only
// (a refusal, which its nonce echo proves).
func (e *Endpoint) unseal(path int, b []byte) ([]byte, *int64) {
	if !e.keyed() {
		return b, nil
	}
	h, err := wire.PeekHeader(b)
	if err != nil || h.Type == wire.TypeHello || h.Type == wire.TypeHelloAck {
		return b, nil // Open counts a bad header
	}
	c := e.conns[ConnID(h.Conn)]
	switch {
	case c == nil:
		return nil, &e.st.DropUnknownConn
	case c.auth != nil:
		return c.auth.open(&e.st, path, b)
	case h.Type == wire.TypeClose:
		return b, nil
	}
	return nil, &e.st.DropAuth
}
