package tcp

import (
	"testing"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// BenchmarkAuthGoodput64MiB is BenchmarkGoodput64MiB (one connection)
// without a key and with one in each payload mode, in one run.
func BenchmarkAuthGoodput64MiB(b *testing.B) {
	key, err := jobkey.Parse("bench-key-0123456789abcdef")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"none", Config{}},
		{"header", Config{Key: key}},
		{"full", Config{Key: key, Payload: PayloadTagged}},
		{"encrypt", Config{Key: key, Payload: PayloadEncrypted}},
	} {
		b.Run(c.name, func(b *testing.B) { benchGoodput(b, c.cfg) })
	}
}
