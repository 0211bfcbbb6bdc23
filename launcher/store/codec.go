package store

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// requestArgs are the decoded items of a request; which fields are set
// depends on the op (see the table in the package doc).
type requestArgs struct {
	key      string
	keys     []string // opWait
	value    []byte   // opSet
	delta    int64    // opAdd
	expected []byte   // opCAS; nil means the key must be absent
	desired  []byte   // opCAS
}

// wantItems is the number of items each op's request carries; -1 means any.
var wantItems = [opEnd]int{
	opHello: 0, opSet: 2, opGet: 1, opTryGet: 1, opAdd: 2,
	opCAS: 4, opWait: -1, opDelete: 1, opCancel: 0,
}

// decodeArgs checks and decodes the items of a request for op.
func decodeArgs(op opCode, items [][]byte) (requestArgs, error) {
	var a requestArgs
	if op < opHello || op >= opEnd {
		return a, fmt.Errorf("%w: unknown op %d", ErrProtocol, op)
	}
	if n := wantItems[op]; n >= 0 && len(items) != n {
		return a, fmt.Errorf("%w: op %d carries %d items, want %d", ErrProtocol, op, len(items), n)
	}
	switch op {
	case opSet:
		a.key, a.value = string(items[0]), items[1]
	case opGet, opTryGet, opDelete:
		a.key = string(items[0])
	case opAdd:
		if len(items[1]) != 8 {
			return a, fmt.Errorf("%w: add delta of %d bytes, want 8", ErrProtocol, len(items[1]))
		}
		a.key, a.delta = string(items[0]), int64(binary.BigEndian.Uint64(items[1]))
	case opCAS:
		return decodeCASArgs(items)
	case opWait:
		a.keys = make([]string, len(items))
		for i, it := range items {
			a.keys[i] = string(it)
		}
	}
	return a, nil
}

func decodeCASArgs(items [][]byte) (requestArgs, error) {
	a := requestArgs{key: string(items[0]), desired: items[3]}
	present, ok := decodeBool(items[1])
	switch {
	case !ok:
		return a, fmt.Errorf("%w: cas presence flag %v", ErrProtocol, items[1])
	case present:
		a.expected = items[2]
	case len(items[2]) != 0:
		return a, fmt.Errorf("%w: cas expects an absent key but carries an old value", ErrProtocol)
	}
	return a, nil
}

// casItems encodes the items of a CompareAndSet request.
func casItems(key string, expected, desired []byte) [][]byte {
	return [][]byte{[]byte(key), encodeBool(expected != nil), expected, desired}
}

func encodeBool(v bool) []byte {
	if v {
		return []byte{1}
	}
	return []byte{0}
}

func decodeBool(b []byte) (value, ok bool) {
	if len(b) != 1 || b[0] > 1 {
		return false, false
	}
	return b[0] == 1, true
}

func encodeInt64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// result is the decoded items of an OK response; which fields are set
// depends on the op of the request it answers.
type result struct {
	value    []byte
	found    bool   // opTryGet: the key exists; opCAS: it existed after the call
	counter  int64  // opAdd
	swapped  bool   // opCAS
	existed  bool   // opDelete
	maxFrame uint32 // opHello
}

// decodeResult checks and decodes the items of an OK response to op.
func decodeResult(op opCode, items [][]byte) (result, error) {
	var r result
	var ok = true
	switch op {
	case opHello:
		ok = len(items) == 1 && len(items[0]) == 4
		if ok {
			r.maxFrame = binary.BigEndian.Uint32(items[0])
		}
	case opSet, opWait:
		ok = len(items) == 0
	case opGet:
		ok = len(items) == 1
		if ok {
			r.value = items[0]
		}
	case opTryGet:
		ok = len(items) == 2
		if ok {
			r.found, ok = decodeBool(items[0])
			r.value = items[1]
		}
	case opAdd:
		ok = len(items) == 1 && len(items[0]) == 8
		if ok {
			r.counter = int64(binary.BigEndian.Uint64(items[0]))
		}
	case opCAS:
		return decodeCASResult(items)
	case opDelete:
		ok = len(items) == 1
		if ok {
			r.existed, ok = decodeBool(items[0])
		}
	default:
		ok = false
	}
	if !ok {
		return result{}, fmt.Errorf("%w: malformed answer to op %d", ErrProtocol, op)
	}
	return r, nil
}

func decodeCASResult(items [][]byte) (result, error) {
	var r result
	if len(items) != 3 {
		return r, fmt.Errorf("%w: malformed answer to compare-and-set", ErrProtocol)
	}
	swapped, ok1 := decodeBool(items[0])
	found, ok2 := decodeBool(items[1])
	if !ok1 || !ok2 || (!found && len(items[2]) != 0) {
		return r, fmt.Errorf("%w: malformed answer to compare-and-set", ErrProtocol)
	}
	r.swapped, r.found = swapped, found
	if found {
		r.value = items[2]
	}
	return r, nil
}

// statusErrors maps each error status to its sentinel error.
var statusErrors = [statusEnd]error{
	statusClosed:     ErrClosed,
	statusBadJobKey:  ErrBadJobKey,
	statusLimit:      ErrLimit,
	statusProtocol:   ErrProtocol,
	statusInvalid:    ErrInvalid,
	statusNotCounter: ErrNotCounter,
	statusOverflow:   ErrOverflow,
}

// errorResponse encodes err as the response to request id. A
// *MissingKeysError becomes statusMissing with the keys as items; any other
// error becomes the status of its sentinel with its message as one item.
func errorResponse(id uint64, err error) *response {
	if mk, ok := err.(*MissingKeysError); ok {
		items := make([][]byte, len(mk.Keys))
		for i, k := range mk.Keys {
			items[i] = []byte(k)
		}
		return &response{status: statusMissing, id: id, items: items}
	}
	status := statusProtocol
	for s, sentinel := range statusErrors {
		if sentinel != nil && errors.Is(err, sentinel) {
			status = statusCode(s)
			break
		}
	}
	return &response{status: status, id: id, items: [][]byte{[]byte(err.Error())}}
}

// remoteError is an error received from the server: its message, and the
// sentinel its status names.
type remoteError struct {
	sentinel error
	msg      string
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

// responseError decodes the error of a non-OK response. For statusMissing it
// returns a *MissingKeysError whose Err is cause.
func responseError(r response, cause error) error {
	if r.status == statusMissing {
		keys := make([]string, len(r.items))
		for i, it := range r.items {
			keys[i] = string(it)
		}
		return &MissingKeysError{Keys: keys, Err: cause}
	}
	if r.status == statusOK || r.status >= statusEnd || len(r.items) != 1 {
		return fmt.Errorf("%w: malformed error response with status %d", ErrProtocol, r.status)
	}
	return &remoteError{sentinel: statusErrors[r.status], msg: string(r.items[0])}
}

func encodeUint32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// isProtocolError reports whether err is one the server answers before
// closing a connection (as opposed to the connection just ending).
func isProtocolError(err error) bool {
	return errors.Is(err, ErrProtocol) || errors.Is(err, ErrLimit) || errors.Is(err, ErrBadJobKey)
}
