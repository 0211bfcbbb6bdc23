package main

import "testing"

func TestRankOf(t *testing.T) {
	env := []byte("A=1\x00STALL_LAB_TAG=x7\x00GOCOLL_RANK=5\x00")
	if r, ok := rankOf(env, []byte("STALL_LAB_TAG=x7")); !ok || r != "5" {
		t.Fatalf("rankOf = %q %v, want 5 true", r, ok)
	}
	for _, c := range []struct{ environ, env string }{
		{"STALL_LAB_TAG=x8\x00GOCOLL_RANK=5\x00", "STALL_LAB_TAG=x7"}, // another job
		{"STALL_LAB_TAG=x7\x00", "STALL_LAB_TAG=x7"},                  // not a rank (the launcher)
		{"STALL_LAB_TAG=x77\x00GOCOLL_RANK=1", "STALL_LAB_TAG=x7"},    // a prefix is not the entry
	} {
		if r, ok := rankOf([]byte(c.environ), []byte(c.env)); ok {
			t.Errorf("rankOf(%q, %q) = %q true, want false", c.environ, c.env, r)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	cpu, wait, ok := parseSchedstat([]byte("1278234 2728943 11\n"))
	if !ok || cpu != 1278234 || wait != 2728943 {
		t.Fatalf("parseSchedstat = %d %d %v", cpu, wait, ok)
	}
	for _, s := range []string{"", "12", "x 3 4"} {
		if _, _, ok := parseSchedstat([]byte(s)); ok {
			t.Errorf("parseSchedstat(%q) ok", s)
		}
	}
}
