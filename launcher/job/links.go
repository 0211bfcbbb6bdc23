package job

import (
	"context"
	"strings"
	"time"

	"github.com/gocoll/gocoll/launcher"
)

// The link figures a job measured as it formed (launcher/probe.go) are a
// job's cache: rank 0 puts them in the job's store under
// launcher.LinksKey, the launcher follows that key while the ranks run
// (Result.Links), and a restarted round gets them in GOCOLL_LINKS, so
// that it takes them instead of probing again.

// linksPoll is how often watchLinks looks for a store not yet reached.
const linksPoll = 100 * time.Millisecond

// watchLinks follows the job's store for rank 0's link figures while ctx
// lasts, and returns what gives them, once ctx has ended ("" if rank 0
// put none there).
func (d *diagnoser) watchLinks(ctx context.Context) func() string {
	var got string
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(linksPoll)
		defer t.Stop()
		for {
			if kv, err := d.store(); err == nil {
				if kv.Wait(ctx, launcher.LinksKey) != nil {
					// ctx ended first: a last look, while the
					// launcher's own store still answers.
					lctx, cancel := context.WithTimeout(context.Background(), linksPoll)
					defer cancel()
					v, ok, err := kv.TryGet(lctx, launcher.LinksKey)
					if err == nil && ok {
						got = string(v)
					}
					return
				}
				if v, err := kv.Get(ctx, launcher.LinksKey); err == nil {
					got = string(v)
				}
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() string {
		<-done
		return got
	}
}

// withLinks returns s with GOCOLL_LINKS=links among its exports, in place
// of any it had; "" leaves s as it is.
func withLinks(s Spec, links string) Spec {
	if links == "" {
		return s
	}
	var keep []string
	for _, e := range s.Export {
		if name, _, _ := strings.Cut(e, "="); name != launcher.EnvLinks {
			keep = append(keep, e)
		}
	}
	s.Export = append(keep, launcher.EnvLinks+"="+links)
	return s
}
