package affinity

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestPick(t *testing.T) {
	cores := [][]int{{0, 4}, {1, 5}}
	for _, c := range []struct {
		index, n int
		over     bool
		want     []int
		err      string
	}{
		{0, 2, false, []int{0, 4}, ""},
		{1, 2, false, []int{1, 5}, ""},
		{2, 3, true, []int{0, 4}, ""},
		{2, 3, false, nil, "--bind-to core: 3 ranks on this host but 2 cores to bind them to (--oversubscribe lets ranks share cores, or --bind-to none)"},
		{2, 2, false, nil, "--bind-to core: rank 2 of 2 on this host is not a rank of it"},
		{-1, 2, false, nil, "--bind-to core: rank -1 of 2 on this host is not a rank of it"},
	} {
		got, err := Pick(cores, c.index, c.n, c.over)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("Pick(%d, %d, %v): error %v, want %q", c.index, c.n, c.over, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Pick(%d, %d, %v) = %v, %v; want %v", c.index, c.n, c.over, got, err, c.want)
		}
	}
	got, _ := Pick(cores, 0, 1, false)
	got[0] = 9
	if cores[0][0] != 0 {
		t.Error("Pick returned the caller's slice")
	}
	if _, err := Pick(nil, 0, 1, false); err == nil {
		t.Error("Pick with no cores: no error")
	}
}

func TestFormat(t *testing.T) {
	for want, cpus := range map[string][]int{"": nil, "3": {3}, "0-3,8": {0, 1, 2, 3, 8}, "0,2,4-5": {0, 2, 4, 5}} {
		if got := Format(cpus); got != want {
			t.Errorf("Format(%v) = %q, want %q", cpus, got, want)
		}
	}
}

// Bind moves every thread, those busy at the time included, to the
// CPUs; and threads made afterwards inherit them.
func TestBindEveryThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux binds")
	}
	cores := Cores()
	if len(cores) == 0 {
		t.Fatal("no cores")
	}
	var all []int
	for _, c := range cores {
		all = append(all, c...)
	}
	slices.Sort(all)
	t.Cleanup(func() {
		if err := Bind(all); err != nil {
			t.Errorf("restoring the mask: %v", err)
		}
	})
	// Threads locked (each waits here until its goroutine holds one), so
	// the runtime has several before Bind.
	stop := make(chan struct{})
	var wg, ready sync.WaitGroup
	locked := func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ready.Done()
		<-stop
	}
	for range 4 {
		wg.Add(1)
		ready.Add(1)
		go locked()
	}
	defer func() { close(stop); wg.Wait() }()
	ready.Wait()
	target := cores[len(cores)-1]
	if err := Bind(target); err != nil {
		t.Fatal(err)
	}
	// A thread made or taken now has the mask too.
	wg.Add(1)
	ready.Add(1)
	go locked()
	ready.Wait()
	threads, err := Threads()
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) < 5 {
		t.Fatalf("%d threads: want at least 5", len(threads))
	}
	for tid, cpus := range threads {
		if !slices.Equal(cpus, target) {
			t.Errorf("thread %d runs on %s, want %s", tid, Format(cpus), Format(target))
		}
	}
	if err := Bind([]int{MaxCPUs}); err == nil {
		t.Error("Bind to CPU MaxCPUs: no error")
	}
	if err := Bind(nil); err == nil {
		t.Error("Bind to no CPU: no error")
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string][]int{"0": {0}, "0-3,8": {0, 1, 2, 3, 8}, "1,3,5-6": {1, 3, 5, 6}, "1023": {1023}} {
		got, err := Parse(s)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
		if Format(got) != s {
			t.Errorf("Format(Parse(%q)) = %q", s, Format(got))
		}
	}
	for _, s := range []string{"", "a", "-1", "1-", "3-1", "1,1", "2,1", "0-3,2", "1024", "0-1024", " 1", "1,", "+1", strings.Repeat("1", 6000)} {
		if got, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, got)
		}
	}
}
