package collective

import (
	"strings"
	"testing"
	"time"
)

// TestOpNowIsMonotonic checks the operations' clock (opNow): its reading
// lies between two time.Now readings taken around it, by the monotonic
// clock, and carries a monotonic reading, so that a deadline made from it
// (newOperation) compares with time.Now exactly.
func TestOpNowIsMonotonic(t *testing.T) {
	for range 1000 {
		before := time.Now()
		now := opNow()
		after := time.Now()
		if now.Before(before) || now.After(after) {
			t.Fatalf("opNow %v not between %v and %v", now, before, after)
		}
		if !strings.Contains(now.String(), " m=") {
			t.Fatalf("opNow %v has no monotonic reading", now)
		}
	}
	d := opNow().Add(time.Millisecond)
	time.Sleep(2 * time.Millisecond)
	if time.Now().Before(d) {
		t.Fatalf("a deadline 1 ms after opNow has not passed 2 ms later")
	}
	if diff := opNow().Round(0).Sub(time.Now().Round(0)); diff > time.Second || diff < -time.Second {
		t.Fatalf("opNow's wall clock is %v from time.Now's", diff)
	}
}
