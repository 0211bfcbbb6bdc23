package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// The handshake that opens every connection (the package doc draws it):
// the server sends a challenge (its nonce), the client answers with its own
// nonce and a proof of the job key, and the server, once the proof checks,
// welcomes the client with its own proof. Neither side sends the key, and
// the server proves nothing to a client that has not proved first.
const (
	// challengeBytes: version, server nonce.
	challengeBytes = 1 + jobkey.NonceSize
	// authBytes: version, client nonce, client proof.
	authBytes = 1 + jobkey.NonceSize + jobkey.TagSize
	// maxWelcomeBytes bounds the server's answer to the proof: an OK
	// response with its proof and MaxFrameBytes, or an error message.
	maxWelcomeBytes = 4096
)

var (
	// errBadTag reports a frame whose tag does not verify.
	errBadTag = fmt.Errorf("%w: wrong tag (a frame forged, altered, replayed or reordered)", ErrProtocol)
	// errLost marks a handshake that the network, not the peer's answer,
	// ended (a connection reset or closed midway): Dial tries again.
	errLost = errors.New("connection lost during the handshake")
)

// proofLabel is what each side's proof tags.
var proofLabel = []byte("store handshake proof")

// session holds a connection's keys: one per direction, both bound to the
// job key and to both nonces.
type session struct {
	c2s, s2c []byte
}

func newSession(key jobkey.Key, clientNonce, serverNonce []byte) session {
	return session{
		c2s: key.Derive(jobkey.PurposeStore, []byte("client to server"), clientNonce, serverNonce),
		s2c: key.Derive(jobkey.PurposeStore, []byte("server to client"), clientNonce, serverNonce),
	}
}

func appendChallenge(b []byte, nonce []byte) []byte {
	start := len(b)
	b = append(append(b, 0, 0, 0, 0, protocolVersion), nonce...)
	b, _ = finishFrame(b, start)
	return b
}

func parseChallenge(body []byte) (nonce []byte, err error) {
	if len(body) != challengeBytes || body[0] != protocolVersion {
		return nil, fmt.Errorf("%w: a challenge of %d bytes (version %d) is not this protocol's (%d bytes, version %d)",
			ErrProtocol, len(body), firstByte(body), challengeBytes, protocolVersion)
	}
	return body[1:], nil
}

func appendAuth(b []byte, nonce, proof []byte) []byte {
	start := len(b)
	b = append(append(append(b, 0, 0, 0, 0, protocolVersion), nonce...), proof...)
	b, _ = finishFrame(b, start)
	return b
}

func parseAuth(body []byte) (nonce, proof []byte, err error) {
	if len(body) != authBytes || body[0] != protocolVersion {
		return nil, nil, fmt.Errorf("%w: a handshake of %d bytes (version %d) is not this protocol's (%d bytes, version %d)",
			ErrProtocol, len(body), firstByte(body), authBytes, protocolVersion)
	}
	return body[1 : 1+jobkey.NonceSize], body[1+jobkey.NonceSize:], nil
}

func firstByte(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

// serverHandshake runs the server's side on a new connection, within
// deadline. It returns the session, or an error to answer (and count)
// before closing the connection.
func serverHandshake(conn net.Conn, br *bufio.Reader, key jobkey.Key, deadline time.Time) (session, error) {
	_ = conn.SetDeadline(deadline)
	ns, err := jobkey.NewNonce()
	if err != nil {
		return session{}, err
	}
	if _, err := conn.Write(appendChallenge(nil, ns[:])); err != nil {
		return session{}, fmt.Errorf("%w: %w", errLost, err)
	}
	body, err := readFrame(br, authBytes)
	if err != nil {
		if isProtocolError(err) {
			return session{}, err
		}
		return session{}, fmt.Errorf("%w: %w", errLost, err)
	}
	nc, proof, err := parseAuth(body)
	if err != nil {
		return session{}, err
	}
	s := newSession(key, nc, ns[:])
	if !jobkey.Verify(s.c2s, proof, proofLabel) {
		return session{}, fmt.Errorf("%w: the client did not prove this job's key", ErrBadJobKey)
	}
	return s, nil
}

// appendWelcome is the server's answer to a good proof: its own proof and
// its MaxFrameBytes.
func appendWelcome(b []byte, s session, maxFrame int) []byte {
	proof := jobkey.Tag(s.s2c, proofLabel)
	b, _ = appendResponse(b, &response{status: statusOK, items: [][]byte{proof[:], encodeUint32(uint32(maxFrame))}})
	return b
}

// clientHandshake runs the client's side on a new connection, within
// deadline, and returns the session and the server's MaxFrameBytes.
// Errors wrap errLost where the connection broke rather than the server
// refusing.
func clientHandshake(conn net.Conn, br *bufio.Reader, key jobkey.Key, deadline time.Time) (session, int, error) {
	_ = conn.SetDeadline(deadline)
	defer conn.SetDeadline(time.Time{})
	lost := func(err error) error {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%w: %w", errLost, err)
	}
	body, err := readFrame(br, maxWelcomeBytes)
	if err != nil {
		return session{}, 0, lost(err)
	}
	ns, err := parseChallenge(body)
	if err != nil {
		if resp, perr := parseResponse(body); perr == nil && resp.status != statusOK {
			return session{}, 0, responseError(resp, nil) // refused at once (MaxConns, closing)
		}
		return session{}, 0, err
	}
	nc, err := jobkey.NewNonce()
	if err != nil {
		return session{}, 0, err
	}
	s := newSession(key, nc[:], ns)
	proof := jobkey.Tag(s.c2s, proofLabel)
	if _, err := conn.Write(appendAuth(nil, nc[:], proof[:])); err != nil {
		return session{}, 0, lost(err)
	}
	if body, err = readFrame(br, maxWelcomeBytes); err != nil {
		return session{}, 0, lost(err)
	}
	resp, err := parseResponse(body)
	if err != nil {
		return session{}, 0, err
	}
	if resp.status != statusOK {
		return session{}, 0, responseError(resp, nil)
	}
	if len(resp.items) != 2 || len(resp.items[0]) != jobkey.TagSize || len(resp.items[1]) != 4 || !jobkey.Verify(s.s2c, resp.items[0], proofLabel) {
		return session{}, 0, fmt.Errorf("%w: the server did not prove this job's key (another job's store?)", ErrBadJobKey)
	}
	r, err := decodeResult(opHello, resp.items[1:])
	if err != nil {
		return session{}, 0, err
	}
	return s, int(r.maxFrame), nil
}
