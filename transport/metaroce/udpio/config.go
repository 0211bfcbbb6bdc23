package udpio

import (
	"errors"
	"fmt"
	"strings"
)

// Defaults and limits of [Config].
const (
	// DefaultSocketBuffer is the default socket receive and send buffer size.
	DefaultSocketBuffer = 8 << 20
	// MaxSocketBuffer is the largest socket buffer size a Config may ask for.
	MaxSocketBuffer = 1 << 30
	// DefaultBatchSize is the default number of messages per system call.
	DefaultBatchSize = 64
	// MaxBatchSize is the largest BatchSize.
	MaxBatchSize = 1024
)

// ErrConfig is wrapped by the errors [Listen] returns for a bad [Config] or
// address.
var ErrConfig = errors.New("udpio: bad config")

// Config sets up a [Socket]. The zero value is valid and means the defaults.
type Config struct {
	// ReadBuffer and WriteBuffer are the socket buffer sizes to ask for, in
	// bytes: 0 means DefaultSocketBuffer (8 MiB), the limit is
	// MaxSocketBuffer. On Linux the socket first tries SO_RCVBUFFORCE /
	// SO_SNDBUFFORCE (which need CAP_NET_ADMIN and ignore the rmem_max and
	// wmem_max sysctls) and falls back to SO_RCVBUF / SO_SNDBUF, which the
	// kernel caps at those sysctls. [Caps] reports what was granted.
	ReadBuffer, WriteBuffer int
	// BatchSize is the largest number of messages moved by one system call:
	// 0 means DefaultBatchSize (64), the limit is MaxBatchSize (1024).
	// ReadBatch returns at most BatchSize messages; WriteBatch sends a
	// longer batch with several calls. The socket keeps two batches of
	// headers (about 200 bytes per message).
	BatchSize int
	// DisableGSO sends trains as separate datagrams instead of one
	// UDP_SEGMENT send.
	DisableGSO bool
	// DisableGRO keeps the kernel from merging received datagrams into
	// trains (UDP_GRO). With GRO on, a NIC may merge datagrams of one flow,
	// and a GSO send over loopback arrives whole, as a train of up to
	// 64 KiB, so read buffers must be ReadBufferSize bytes long; turn GRO off to read into shorter
	// buffers without truncation.
	DisableGRO bool
	// DisableECN neither marks sent datagrams ECT(0) nor reads the ECN bits
	// of received ones (Message.CE stays false).
	DisableECN bool
	// DisableTimestamps does not ask the kernel for receive timestamps
	// (Message.Received stays 0).
	DisableTimestamps bool
	// Device, if not empty, is the name of the network interface the
	// socket is bound to before its address (SO_BINDTODEVICE): it then
	// sends and receives through that interface only, whatever the routing
	// table says. At most MaxDeviceName bytes. Linux only; elsewhere, and
	// where the kernel refuses it (before Linux 5.7 it needs CAP_NET_RAW),
	// Listen fails.
	Device string
	// Unpolled leaves the socket out of the Go runtime's poller (Linux
	// only; elsewhere it is ignored): an arriving datagram then wakes
	// nobody unless a [Poller] that watches the socket is being waited on
	// ([Poller.Wait]), so that one goroutine can wait for all of a set of
	// sockets and, between waits, read them at its own pace, many
	// datagrams a wake-up. Every call still works: reads and writes that
	// must wait (ReadBatch, ReadEach, Peek, a full send buffer) wait in
	// poll(2) slices of at most unpolledSlice, a blocked system call
	// rather than a parked goroutine, so read such a socket through a
	// Poller and [TryReader] instead.
	Unpolled bool
}

// MaxDeviceName is the longest Config.Device (IFNAMSIZ less its NUL).
const MaxDeviceName = 15

// withDefaults checks c and returns it with zero fields set to defaults.
func (c Config) withDefaults() (Config, error) {
	if err := checkRange("ReadBuffer", c.ReadBuffer, MaxSocketBuffer); err != nil {
		return c, err
	}
	if err := checkRange("WriteBuffer", c.WriteBuffer, MaxSocketBuffer); err != nil {
		return c, err
	}
	if err := checkRange("BatchSize", c.BatchSize, MaxBatchSize); err != nil {
		return c, err
	}
	if len(c.Device) > MaxDeviceName || strings.ContainsRune(c.Device, 0) {
		return c, fmt.Errorf("%w: Device %q: at most %d bytes, no NUL", ErrConfig, c.Device, MaxDeviceName)
	}
	if c.ReadBuffer == 0 {
		c.ReadBuffer = DefaultSocketBuffer
	}
	if c.WriteBuffer == 0 {
		c.WriteBuffer = DefaultSocketBuffer
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	return c, nil
}

func checkRange(name string, v, limit int) error {
	if v < 0 || v > limit {
		return fmt.Errorf("%w: %s %d not in [0, %d]", ErrConfig, name, v, limit)
	}
	return nil
}

// Caps tells what a [Socket] got from the kernel.
type Caps struct {
	// Batch: ReadBatch and WriteBatch move many datagrams per system call
	// (recvmmsg/sendmmsg).
	Batch bool
	// GSO: trains are sent as one UDP_SEGMENT send. Turns false for good
	// after a send fails with EIO.
	GSO bool
	// GRO: the kernel may merge received datagrams into trains.
	GRO bool
	// ECN: datagrams are sent ECT(0) and received CE marks are reported.
	ECN bool
	// ErrQueue: the kernel queues the ICMP errors about sent datagrams
	// (IP_RECVERR, IPV6_RECVERR) for [Socket.DrainErrors].
	ErrQueue bool
	// Timestamps: the kernel stamps each received datagram with the time
	// it arrived (SO_TIMESTAMPNS; Message.Received). Linux only.
	Timestamps bool
	// Peek: [Socket.Peek] and scatter reads (a ReadBatch message with a
	// Gather) work. Linux only; elsewhere they fail with an error
	// wrapping errors.ErrUnsupported.
	Peek bool
	// ReadBuffer and WriteBuffer are the socket buffer sizes granted, in the
	// units of the request (Linux reports twice the size to cover its
	// bookkeeping; this is half of what it reports).
	ReadBuffer, WriteBuffer int
}
