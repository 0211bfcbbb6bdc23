package mrtransport

import (
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport/metaroce"
)

// BenchmarkAuthCost measures what authentication costs on loopback, every
// mode in one run: one connection's goodput (a 64 MiB message, as
// BenchmarkGoodput64MiB) and a 64 MiB float32 AllReduce's busbw at 4
// ranks, with loopback's 64 KiB datagrams and with a NIC's 1452 bytes.
func BenchmarkAuthCost(b *testing.B) {
	key, err := jobkey.Parse("bench-key-0123456789abcdef")
	if err != nil {
		b.Fatal(err)
	}
	modes := []metaroce.AuthMode{metaroce.AuthNone, metaroce.AuthHeader, metaroce.AuthFull, metaroce.AuthEncrypt}
	for _, datagram := range []int{0, DefaultNICDatagram} {
		for _, mode := range modes {
			cfg := Config{MaxDatagram: datagram}
			if mode != metaroce.AuthNone {
				cfg.Core.Auth = metaroce.AuthConfig{Key: key, Mode: mode}
			}
			name := fmt.Sprintf("datagram=%d/%v", datagram, mode)
			b.Run("p2p/"+name, func(b *testing.B) { benchGoodput(b, asTransport(newTestWorld(b, 2, cfg))) })
			b.Run("allreduce64MiB/"+name, func(b *testing.B) {
				collectivetest.BenchAllReduce(b, asTransport(newTestWorld(b, 4, cfg)), 64<<20)
			})
		}
	}
}
