package probe

import (
	"testing"
	"time"
)

// cpuCosts fits a message's CPU and the waiting rate to the ping-pongs and
// the bursts: 30 µs a message and a quarter of a core while waiting, over
// 10 round trips of 4 ms and 3 bursts of 5 ms, give back 30 µs; bursts as
// slow a message as the ping-pongs give no figure where the ping-pongs
// mostly waited, and theirs where they kept both ends busy; delayed
// ping-pongs (the same messages, longer trips) tell the two apart there.
// A byte's CPU is the bulk's less a round trip's each.
func TestCPUCosts(t *testing.T) {
	const msg, wait = 30e-6, 0.25
	r := cpuRuns{pings: 10, pingTook: 0.040, burstTook: 0.015, bulkBytes: 1 << 20}
	r.ping = 20*msg + wait*r.pingTook
	r.burst = burstRuns*(burstLen+1)*msg + wait*r.burstTook
	trip := r.ping / 10
	r.bulk = bulkRuns*trip + bulkRuns*float64(r.bulkBytes)*2e-9
	perMsg, perByte := cpuCosts(r)
	if perMsg != 30*time.Microsecond {
		t.Errorf("a message %v, want 30µs", perMsg)
	}
	if perByte < 1.999e-9 || perByte > 2.001e-9 {
		t.Errorf("a byte %.4g s, want 2e-9", perByte)
	}
	r.burstTook = r.pingTook * burstRuns * (burstLen + 1) / 20 // as slow a message
	if perMsg, _ := cpuCosts(r); perMsg != 0 {
		t.Errorf("bursts as slow as ping-pongs, mostly waiting: a message %v, want 0 (unknown)", perMsg)
	}
	// A short link, its ping-pongs' ends busy (CPU 0.9 of their time):
	// the message's CPU is the ping-pongs' a message.
	r.ping = 0.9 * 2 * r.pingTook
	if perMsg, _ := cpuCosts(r); perMsg != time.Duration(r.ping/20*1e9) {
		t.Errorf("busy ping-pongs: a message %v, want %v", perMsg, time.Duration(r.ping/20*1e9))
	}
	// The delayed ping-pongs: each trip 1 ms longer, its CPU only the
	// waiting's more; they give the waiting rate and so the message's
	// CPU, where the bursts could not (ping-pongs not busy).
	r.ping = 20*msg + wait*r.pingTook
	r.delayedTook = delayedPings * (r.pingTook/10 + 1e-3)
	r.delayed = delayedPings * (2*msg + wait*r.delayedTook/delayedPings)
	if perMsg, _ := cpuCosts(r); perMsg != 30*time.Microsecond {
		t.Errorf("delayed ping-pongs: a message %v, want 30µs", perMsg)
	}
	// A process that burns the same share of a core whatever it does: its
	// CPU is all waiting, the message's none.
	r.ping, r.delayed = wait*r.pingTook, wait*r.delayedTook
	if perMsg, _ := cpuCosts(r); perMsg != 0 {
		t.Errorf("delayed ping-pongs, CPU all waiting: a message %v, want 0", perMsg)
	}
	// Delayed trips not 5/4 as long as the ping-pongs' (a loaded machine
	// whose trips took longer than the delay): no figure from them.
	r.ping, r.delayedTook = 20*msg+wait*r.pingTook, delayedPings*r.pingTook/10*1.2
	r.delayed = delayedPings * (2*msg + wait*r.delayedTook/delayedPings)
	if perMsg, _ := cpuCosts(r); perMsg != 0 {
		t.Errorf("delayed trips barely longer: a message %v, want 0 (unknown)", perMsg)
	}
	if perMsg, perByte := cpuCosts(cpuRuns{pings: 1, bulkBytes: 1}); perMsg != 0 || perByte != 0 {
		t.Errorf("nothing measured: %v, %v", perMsg, perByte)
	}
}
