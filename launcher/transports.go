package launcher

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/tcp"
)

// DefaultTransport is the transport of a job that does not set
// GOCOLL_TRANSPORT: TCP until the MetaRoCE transport exists.
const DefaultTransport = TransportTCP

// transportSpec is what every transport needs to set up one rank.
type transportSpec struct {
	Rank   int
	JobID  uint64       // equal on every rank of the job
	Host   string       // IP address to listen on
	Logger *slog.Logger // nil: no logging
}

// transportListener is one rank's half-built transport: listening, its
// address known, waiting for every rank's address to connect.
type transportListener interface {
	// Addr is what the other ranks pass to Connect for this rank; opaque.
	Addr() string
	// Connect builds this rank's endpoint; addrs[i] is rank i's Addr.
	Connect(ctx context.Context, addrs []string) (transport.Endpoint, error)
	// Close releases the listener if Connect is never called.
	Close() error
}

// listenTransport starts the transport called name. To add a transport,
// add a case.
func listenTransport(ctx context.Context, name string, spec transportSpec) (transportListener, error) {
	switch name {
	case TransportTCP:
		ln, err := tcp.Listen(ctx, tcp.Config{
			Rank: spec.Rank, JobID: spec.JobID, ListenAddr: net.JoinHostPort(spec.Host, "0"),
		})
		if err != nil {
			return nil, err
		}
		return tcpListener{ln}, nil
	case TransportMetaRoCE:
		return nil, fmt.Errorf("%s=%s: the MetaRoCE transport is not available in this build; use %s",
			EnvTransport, TransportMetaRoCE, TransportTCP)
	}
	return nil, fmt.Errorf("unknown transport %q", name)
}

// tcpListener adapts *tcp.Listener, whose Connect returns *tcp.Endpoint.
type tcpListener struct{ *tcp.Listener }

func (l tcpListener) Connect(ctx context.Context, addrs []string) (transport.Endpoint, error) {
	ep, err := l.Listener.Connect(ctx, addrs)
	if err != nil {
		return nil, err
	}
	return ep, nil
}
