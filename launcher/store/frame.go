package store

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Protocol constants; the package doc describes the frame layout.
const (
	// protocolVersion 2: the job key never crosses the wire (version 1
	// carried it in every request).
	protocolVersion = 2
	// maxItems bounds the items of one frame (the count is 16 bits).
	maxItems = 1<<16 - 1
	// frameLenBytes is the size of the length that precedes every frame.
	frameLenBytes = 4
	// tagBytes is the size of the tag that ends every frame after the
	// handshake (HMAC-SHA256 truncated).
	tagBytes = 16
)

// opCode names a request's operation.
type opCode uint8

const (
	opHello opCode = 1 + iota
	opSet
	opGet
	opTryGet
	opAdd
	opCAS
	opWait
	opDelete
	opCancel
	opEnd // one past the last op
)

// statusCode is a response's outcome.
type statusCode uint8

const (
	statusOK statusCode = iota
	statusMissing
	statusClosed
	statusBadJobKey
	statusLimit
	statusProtocol
	statusInvalid
	statusNotCounter
	statusOverflow
	statusEnd // one past the last status
)

// request is one decoded request frame. Its byte slices alias the frame.
type request struct {
	op        opCode
	id        uint64
	timeoutMs uint32 // wait timeout in milliseconds; 0 means none
	items     [][]byte
}

// response is one decoded response frame. Its byte slices alias the frame.
type response struct {
	status statusCode
	id     uint64
	items  [][]byte
}

// readFrame reads one length-prefixed frame body of at most maxBytes bytes.
func readFrame(r io.Reader, maxBytes int) ([]byte, error) {
	var hdr [frameLenBytes]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if uint64(n) > uint64(maxBytes) {
		return nil, fmt.Errorf("%w: frame of %d bytes exceeds MaxFrameBytes %d", ErrLimit, n, maxBytes)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: empty frame", ErrProtocol)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading a frame of %d bytes: %w", n, noEOF(err))
	}
	return body, nil
}

// noEOF turns an EOF inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// appendRequest appends r as a whole frame, length included. It fails if r
// breaks a limit of the format.
func appendRequest(b []byte, r *request) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0, protocolVersion, byte(r.op))
	b = binary.BigEndian.AppendUint64(b, r.id)
	b = binary.BigEndian.AppendUint32(b, r.timeoutMs)
	b, err := appendItems(b, r.items)
	if err != nil {
		return b[:start], err
	}
	return finishFrame(b, start)
}

// appendResponse appends r as a whole frame, length included.
func appendResponse(b []byte, r *response) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0, protocolVersion, byte(r.status))
	b = binary.BigEndian.AppendUint64(b, r.id)
	b, err := appendItems(b, r.items)
	if err != nil {
		return b[:start], err
	}
	return finishFrame(b, start)
}

func appendItems(b []byte, items [][]byte) ([]byte, error) {
	if len(items) > maxItems {
		return b, fmt.Errorf("%w: %d items exceed the %d a frame holds", ErrLimit, len(items), maxItems)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(items)))
	for _, it := range items {
		if uint64(len(it)) > 1<<32-1 {
			return b, fmt.Errorf("%w: item of %d bytes", ErrLimit, len(it))
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(it)))
		b = append(b, it...)
	}
	return b, nil
}

// finishFrame writes the length of the frame that starts at b[start].
func finishFrame(b []byte, start int) ([]byte, error) {
	n := len(b) - start - frameLenBytes
	if uint64(n) > 1<<32-1 {
		return b[:start], fmt.Errorf("%w: frame of %d bytes", ErrLimit, n)
	}
	binary.BigEndian.PutUint32(b[start:], uint32(n))
	return b, nil
}

// parseRequest decodes a request frame body (without its length).
func parseRequest(body []byte) (request, error) {
	d := decoder{b: body}
	version := d.u8()
	r := request{op: opCode(d.u8()), id: d.u64(), timeoutMs: d.u32()}
	r.items = d.items()
	if err := d.finish("request"); err != nil {
		return request{}, err
	}
	if version != protocolVersion {
		return request{}, fmt.Errorf("%w: unsupported version %d", ErrProtocol, version)
	}
	if r.op < opHello || r.op >= opEnd {
		return request{}, fmt.Errorf("%w: unknown op %d", ErrProtocol, r.op)
	}
	return r, nil
}

// parseResponse decodes a response frame body (without its length).
func parseResponse(body []byte) (response, error) {
	d := decoder{b: body}
	version := d.u8()
	r := response{status: statusCode(d.u8()), id: d.u64()}
	r.items = d.items()
	if err := d.finish("response"); err != nil {
		return response{}, err
	}
	if version != protocolVersion {
		return response{}, fmt.Errorf("%w: unsupported version %d", ErrProtocol, version)
	}
	if r.status >= statusEnd {
		return response{}, fmt.Errorf("%w: unknown status %d", ErrProtocol, r.status)
	}
	return r, nil
}

// decoder reads big-endian fields from b. The first short read sets short,
// after which every read returns zero values.
type decoder struct {
	b     []byte
	short bool
}

func (d *decoder) take(n int) []byte {
	if d.short || n > len(d.b) {
		d.short = true
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8() uint8 {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if v := d.take(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if v := d.take(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// items reads a 16-bit count and that many length-prefixed items. The
// slice's capacity is bounded by the bytes left, not by the count read.
func (d *decoder) items() [][]byte {
	n := int(d.u16())
	if d.short {
		return nil
	}
	items := make([][]byte, 0, min(n, len(d.b)/4))
	for range n {
		size := d.u32()
		if d.short || uint64(size) > uint64(len(d.b)) {
			d.short = true
			return nil
		}
		items = append(items, d.take(int(size)))
	}
	return items
}

// finish reports a short frame or trailing bytes.
func (d *decoder) finish(what string) error {
	if d.short {
		return fmt.Errorf("%w: truncated %s frame", ErrProtocol, what)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the end of a %s frame", ErrProtocol, len(d.b), what)
	}
	return nil
}
