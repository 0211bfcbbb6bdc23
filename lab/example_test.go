//go:build linux

package lab_test

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/gocoll/gocoll/lab"
)

// Example builds a lab of two sites joined by two paths, opens a UDP
// socket in one host from this process, cuts a path silently and prints
// the counters. It needs root, so it has no checked output.
func Example() {
	ctx := context.Background()
	l, err := lab.Up(ctx, lab.Spec{Name: "ex", Paths: 2, HostsPerSite: 1, RateMbit: 100})
	if err != nil {
		fmt.Println(err) // lab.ErrNotRoot, lab.ErrUnavailable, or what failed
		return
	}
	defer func() { _ = l.Down(ctx) }()

	var conn *net.UDPConn
	err = l.Do("s2h1", func() (err error) { // the socket lives in s2h1's namespace
		conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(10, 2, 0, 11), Port: 5000})
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	p, _ := l.Route(ctx, "s1h1", "s2h1", 40000, 5000, "udp") // the path of that flow
	if err := l.Cut(ctx, p, true); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := l.Exec(ctx, "s1h1", "ip", "-br", "addr")
	fmt.Printf("%s", out)
	stats, err := l.Stats(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	lab.FormatStats(os.Stdout, stats)
	fmt.Print(l.Hostfile(4)) // for gocoll run --rsh 'ip netns exec {host}'
}
