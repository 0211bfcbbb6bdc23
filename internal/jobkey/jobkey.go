// Package jobkey holds a job's shared secret and derives from it the keys
// each part of gocoll authenticates with.
//
// A job has one key, known to every rank and to the store (GOCOLL_JOB_KEY;
// gocoll run generates one per job). The key itself never goes on the wire
// and is never printed: a Key formats as "[redacted job key]" under every fmt
// verb, in JSON and in text encodings; Reveal is the one way to get the
// secret back, for handing it to a child process (environment or stdin, never
// its command line).
//
// Every use of the key goes through a derived key, one per purpose (the
// store, each transport) and per connection: Derive is HKDF-SHA256 (RFC 5869)
// over the key, salted with a fixed protocol label, with the purpose and any
// connection context (nonces, ranks) as its info. Two purposes, or two
// connections with different nonces, never share a key, so a tag made for one
// is never valid for another.
//
// The tags (Tag, Verify, Tagger) are HMAC-SHA256 over length-prefixed parts,
// so parts cannot be shifted between fields. Verify and Tagger.Verify accept a
// tag truncated to MinTagSize bytes or more, compared in constant time.
//
// A typical handshake, as the store does it (both sides hold the Key):
//
//	client -> server  nonceC                      (NewNonce)
//	server -> client  nonceS, Tag(Derive(p, nonceC, nonceS), "server")
//	client -> server  Tag(Derive(p, nonceC, nonceS), "client")
//
// after which both use Derive(p, nonceC, nonceS) (or a key derived from it)
// to tag every message with its sequence number against replays.
package jobkey

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
)

// Limits and sizes.
const (
	// MinLen and MaxLen bound a key's text in bytes. 16 bytes is the least
	// that keeps an offline guess at a random key out of reach; a generated
	// key has GeneratedLen.
	MinLen = 16
	MaxLen = 1024
	// GeneratedLen is the length of Generate's keys: 32 random bytes in hex.
	GeneratedLen = 64
	// Size is the length of every derived key (an HMAC-SHA256 key, or an
	// AES-256 key; AES-128 takes its first 16 bytes).
	Size = 32
	// NonceSize is the length of NewNonce's nonces.
	NonceSize = 16
	// TagSize is a full tag's length; MinTagSize the shortest tag Verify
	// accepts (a forgery then succeeds with probability 2^-64 per try).
	TagSize    = sha256.Size
	MinTagSize = 8
)

// Purposes: the info strings that separate each user's derived keys. A new
// user of the key picks a new purpose; changing a protocol changes its
// purpose's version.
const (
	PurposeStore    = "gocoll/store/v1"
	PurposeMetaRoCE = "gocoll/metaroce/v1"
	PurposeTCP      = "gocoll/tcp/v1"
	PurposeSHM      = "gocoll/shm/v1"
)

// salt is HKDF's extract salt: it ties every derived key to this scheme.
const salt = "gocoll jobkey v1"

// insecureText is the well-known key of Insecure: it protects nothing.
const insecureText = "gocoll-insecure-job-key-not-a-secret"

// redacted is what a Key prints as.
const redacted = "[redacted job key]"

// ErrInvalid reports a key text that Parse refuses.
var ErrInvalid = errors.New("jobkey: invalid job key")

// Key is a job's secret. The zero Key is no key (IsZero). A Key is
// immutable and safe for concurrent use; copies share the secret.
type Key struct {
	text     string // the secret as given
	prk      []byte // HKDF pseudorandom key from text
	insecure bool
}

// Parse validates a key's text: MinLen to MaxLen bytes, printable ASCII
// (0x21-0x7e: no spaces or control characters, so it passes through an
// environment variable or one line of stdin unchanged). The error names the
// rule broken, never the key.
func Parse(text string) (Key, error) {
	if len(text) < MinLen || len(text) > MaxLen {
		return Key{}, fmt.Errorf("%w: %d bytes, want %d to %d", ErrInvalid, len(text), MinLen, MaxLen)
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x21 || c > 0x7e {
			return Key{}, fmt.Errorf("%w: byte %d is not printable ASCII (0x21-0x7e)", ErrInvalid, i)
		}
	}
	return newKey(text, false), nil
}

// Generate returns a fresh random key (GeneratedLen hex characters from
// crypto/rand).
func Generate() (Key, error) {
	var b [GeneratedLen / 2]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		return Key{}, fmt.Errorf("jobkey: generate: %w", err)
	}
	return newKey(hex.EncodeToString(b[:]), false), nil
}

// Insecure returns the well-known key of a job run with GOCOLL_INSECURE=1:
// the protocols run unchanged, but anyone can compute the key, so it keeps no
// one out. IsInsecure reports it.
func Insecure() Key { return newKey(insecureText, true) }

func newKey(text string, insecure bool) Key {
	prk, err := hkdf.Extract(sha256.New, []byte(text), []byte(salt))
	if err != nil { // HKDF-Extract cannot fail for SHA-256
		panic("jobkey: " + err.Error())
	}
	return Key{text: text, prk: prk, insecure: insecure}
}

// IsZero reports whether k is the zero Key (no key).
func (k Key) IsZero() bool { return k.prk == nil }

// IsInsecure reports whether k is Insecure's well-known key.
func (k Key) IsInsecure() bool { return k.insecure }

// Reveal returns the secret text, which Parse accepts back. Use it only to
// hand the key to a child process through its environment or stdin; never
// log it or put it on a command line.
func (k Key) Reveal() string { return k.text }

// Equal reports whether k and o are the same key, in constant time.
func (k Key) Equal(o Key) bool {
	return k.IsZero() == o.IsZero() && hmac.Equal(k.prk, o.prk)
}

// String returns "[redacted job key]" (or "[no job key]" for the zero Key).
func (k Key) String() string {
	switch {
	case k.IsZero():
		return "[no job key]"
	case k.insecure:
		return "[insecure job key]"
	}
	return redacted
}

// GoString is String, so %#v redacts too.
func (k Key) GoString() string { return k.String() }

// Format prints String under every verb (%v, %s, %q, %x, %d...).
func (k Key) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", k.String())
		return
	}
	io.WriteString(f, k.String())
}

// MarshalText returns String, so JSON and text encoders redact; a Key
// cannot be unmarshalled (use Parse).
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Derive returns the Size-byte key for purpose and context: HKDF-Expand
// (SHA-256) of k's extracted key, with info = purpose, a zero byte, then
// each context part preceded by its 4-byte big-endian length. It panics on
// the zero Key or on context over 64 KiB in all (both programming errors).
func (k Key) Derive(purpose string, context ...[]byte) []byte {
	if k.IsZero() {
		panic("jobkey: Derive on the zero Key")
	}
	info := make([]byte, 0, len(purpose)+1+8*len(context))
	info = append(append(info, purpose...), 0)
	for _, c := range context {
		info = binary.BigEndian.AppendUint32(info, uint32(len(c)))
		info = append(info, c...)
	}
	if len(info) > 64<<10 {
		panic("jobkey: Derive context over 64 KiB")
	}
	out, err := hkdf.Expand(sha256.New, k.prk, string(info), Size)
	if err != nil { // only for lengths over 255*32
		panic("jobkey: " + err.Error())
	}
	return out
}

// NewNonce returns NonceSize random bytes from crypto/rand.
func NewNonce() ([NonceSize]byte, error) {
	var n [NonceSize]byte
	if _, err := io.ReadFull(rand.Reader, n[:]); err != nil {
		return n, fmt.Errorf("jobkey: nonce: %w", err)
	}
	return n, nil
}

// Tag returns the full HMAC-SHA256 tag under key (a derived key) of parts,
// each preceded by its 8-byte big-endian length.
func Tag(key []byte, parts ...[]byte) [TagSize]byte {
	var t [TagSize]byte
	NewTagger(key).Tag(t[:0], parts...)
	return t
}

// Verify reports whether tag (full, or truncated to at least MinTagSize
// bytes) is the tag under key of parts, in constant time.
func Verify(key, tag []byte, parts ...[]byte) bool {
	return NewTagger(key).Verify(tag, parts...)
}

// Tagger tags and verifies many messages under one key without allocating
// a new HMAC each time. A Tagger is not safe for concurrent use.
type Tagger struct {
	h   hash.Hash
	len [8]byte
	sum [TagSize]byte
}

// NewTagger returns a Tagger for key (a derived key; any length works, Size
// is right).
func NewTagger(key []byte) *Tagger { return &Tagger{h: hmac.New(sha256.New, key)} }

// Tag appends the full tag of parts (as Tag) to dst and returns the result.
func (t *Tagger) Tag(dst []byte, parts ...[]byte) []byte {
	t.h.Reset()
	for _, p := range parts {
		binary.BigEndian.PutUint64(t.len[:], uint64(len(p)))
		t.h.Write(t.len[:])
		t.h.Write(p)
	}
	return t.h.Sum(dst)
}

// Verify reports whether tag, full or truncated to MinTagSize bytes or
// more, is the tag of parts, in constant time.
func (t *Tagger) Verify(tag []byte, parts ...[]byte) bool {
	if len(tag) < MinTagSize || len(tag) > TagSize {
		return false
	}
	full := t.Tag(t.sum[:0], parts...)
	return hmac.Equal(full[:len(tag)], tag)
}
