package jobkey_test

import (
	"fmt"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// Both sides of a connection hold the job key; each sends a fresh nonce,
// then both derive the connection's key and tag every message with its
// sequence number.
func Example() {
	key, err := jobkey.Parse("a-job-key-of-at-least-16-bytes")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(key) // never the secret

	nc, _ := jobkey.NewNonce() // the client's
	ns, _ := jobkey.NewNonce() // the server's
	conn := key.Derive(jobkey.PurposeStore, nc[:], ns[:])

	seq := []byte{0, 0, 0, 0, 0, 0, 0, 1}
	tag := jobkey.Tag(conn, seq, []byte("request body"))
	fmt.Println(jobkey.Verify(conn, tag[:16], seq, []byte("request body")))
	fmt.Println(jobkey.Verify(conn, tag[:16], seq, []byte("forged body")))
	// Output:
	// [redacted job key]
	// true
	// false
}
