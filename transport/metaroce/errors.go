package metaroce

import (
	"errors"
	"fmt"
	"time"
)

// Errors of the core. Test with errors.Is.
var (
	// ErrConfig reports a Config field out of range.
	ErrConfig = errors.New("metaroce: bad configuration")
	// ErrLimit reports a documented bound reached (connections, queued
	// sends, posted receives).
	ErrLimit = errors.New("metaroce: limit reached")
	// ErrUnknownConn reports a connection id this endpoint does not have.
	ErrUnknownConn = errors.New("metaroce: unknown connection")
	// ErrDuplicate reports a send or receive whose (stream, msg) key is
	// already in use on the connection.
	ErrDuplicate = errors.New("metaroce: (stream, msg) already in use")
	// ErrTooLong reports a message longer than wire.MaxMessageLen.
	ErrTooLong = errors.New("metaroce: message too long")
	// ErrTruncated fails a receive whose message is longer than its buffer.
	ErrTruncated = errors.New("metaroce: message longer than receive buffer")
	// ErrRemoteCancelled fails a receive whose sender cancelled the message.
	ErrRemoteCancelled = errors.New("metaroce: sender cancelled the message")
	// ErrClosed fails the operations of a connection closed by this side.
	ErrClosed = errors.New("metaroce: connection closed")
	// ErrPeerClosed fails the operations of a connection the peer closed.
	ErrPeerClosed = errors.New("metaroce: connection closed by peer")
	// ErrIdleTimeout fails a connection that heard nothing from its peer
	// for Config.IdleTimeout, or could not be set up within it.
	ErrIdleTimeout = errors.New("metaroce: peer silent, connection timed out")
	// ErrPeerGone fails the connections to a peer whose socket the network
	// reported closed (Endpoint.HandlePeerGone), and, as a
	// *PeerTimeoutError, those to a peer silent for Config.PeerTimeout.
	ErrPeerGone = errors.New("metaroce: the peer's port is closed (ICMP port unreachable): its process is gone")
	// ErrPeerTimeout is what a *PeerTimeoutError is, besides ErrPeerGone.
	ErrPeerTimeout = errors.New("metaroce: the peer stopped answering")
)

// PeerTimeoutError fails a connection whose peer answered nothing on any
// path for Config.PeerTimeout while an operation waited on it (the peer's
// host vanished, its process stopped, or every path is cut). It is
// ErrPeerTimeout and ErrPeerGone for errors.Is.
type PeerTimeoutError struct {
	Silent time.Duration // how long the peer had been silent
	Paths  int           // the connection's paths, all of them silent
}

func (e *PeerTimeoutError) Error() string {
	return fmt.Sprintf("metaroce: the peer stopped answering: nothing heard on any of %d paths for %v (PeerTimeout) while an operation waited on it",
		e.Paths, e.Silent.Round(time.Millisecond))
}

// Is reports whether target is ErrPeerTimeout or ErrPeerGone.
func (e *PeerTimeoutError) Is(target error) bool {
	return target == ErrPeerTimeout || target == ErrPeerGone
}
