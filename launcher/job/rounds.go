package job

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/store"
)

// The restart rounds of a job of several nodes (RunRestarting with NNodes
// above 1): the launchers agree through the job's store, which node 0's
// launcher serves at the rendezvous endpoint for every round, under keys
// of their own, beside the ranks' (launcher.JobStore's):
//
//	max         MaxRestarts, set by the first node there; every node must give the same
//	arrive/K/N  node N has started round K (its ranks' restart count K)
//	done/K/N    every rank of node N succeeded in round K
//	restart/K   round K is asked for (by a node whose ranks failed in round K-1); the value says why
//	end         the job has failed; the value says why (the first reason stays)
//	exit/N      node N has seen the job's end; node 0 waits for these before closing the store
//
// A node watches restart/K+1 and end while its ranks run round K, and
// stops them when either appears; after round K it goes on to round K+1
// if restart/K+1 is there, or posts it itself if its own ranks failed
// (end instead once K is MaxRestarts); if its ranks succeeded it posts
// done/K/N and waits for every node's done, a restart, or end. Every wait
// for another node (its arrival at a restart, its end once this node's
// ranks have succeeded) is bounded by Spec.RdzvTimeout, past which the
// node posts end naming the late nodes.
const roundsPrefix = "gocoll-run/"

// rounds is one node's side of the agreement.
type rounds struct {
	s      Spec
	kv     store.Store
	srv    *store.Server // node 0's, served for every round
	client *store.Client // the other nodes' connection to it
	last   int           // the last round started
}

// openRounds serves (node 0) or reaches (the others) the job's store and
// checks that this node's MaxRestarts is the job's.
func openRounds(ctx context.Context, s Spec) (*rounds, error) {
	key, err := s.nodeKey()
	if err != nil {
		return nil, err
	}
	r := &rounds{s: s}
	var base store.Store
	if s.NodeRank == 0 {
		bind := nodeStoreBind(s.RdzvEndpoint)
		r.srv, err = store.Listen(context.Background(), bind, store.Config{JobKey: key})
		if err != nil {
			return nil, fmt.Errorf("serving the store at --rdzv-endpoint %s: %v", s.RdzvEndpoint, err)
		}
		base = r.srv.Local()
	} else {
		sctx, stop := stopOn(ctx, s.Signals)
		dctx, cancel := context.WithTimeout(sctx, s.RdzvTimeout)
		r.client, err = store.Dial(dctx, s.RdzvEndpoint, store.ClientConfig{JobKey: key, RetryMax: 500 * time.Millisecond})
		cancel()
		sig := stop()
		switch {
		case sig != 0:
			if err == nil {
				r.client.Close()
			}
			return nil, fmt.Errorf("stopped by signal %d (%v) while reaching node 0's store at --rdzv-endpoint %s", int(sig), sig, s.RdzvEndpoint)
		case errors.Is(err, store.ErrBadJobKey):
			return nil, fmt.Errorf("node 0's store at %s refused this node's job key: every node needs the same GOCOLL_JOB_KEY or --rdzv-id", s.RdzvEndpoint)
		case err != nil:
			return nil, fmt.Errorf("node 0's store at --rdzv-endpoint %s did not answer within --rdzv-timeout %v: %v", s.RdzvEndpoint, s.RdzvTimeout, err)
		}
		base = r.client
	}
	r.kv = roundsStore(base, s.JobID)
	want := []byte(strconv.Itoa(s.MaxRestarts))
	got, _, err := r.kv.CompareAndSet(ctx, "max", nil, want)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("the job's store at %s: %v", s.RdzvEndpoint, err)
	}
	if string(got) != string(want) {
		r.close()
		return nil, fmt.Errorf("--max-restarts %d, but another node of the job gives %s: every node must give the same", s.MaxRestarts, got)
	}
	return r, nil
}

// roundsStore is the view of the job's store (of job id jobID) that holds
// the rounds' keys.
func roundsStore(s store.Store, jobID string) store.Store {
	return store.Prefixed(s, roundsPrefix+strconv.Itoa(len(jobID))+":"+jobID+"/")
}

// nodeStoreBind is where node 0's launcher serves the store for the
// rendezvous endpoint ep: ep itself if it is on loopback, else ep's port
// on every interface (so that its own ranks reach it on loopback too).
func nodeStoreBind(ep string) string {
	host, port, _ := net.SplitHostPort(ep) // checked by checkNodes
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		return net.JoinHostPort(host, port)
	}
	return net.JoinHostPort("", port)
}

func (r *rounds) close() {
	if r.client != nil {
		_ = r.client.Close()
	}
	if r.srv != nil {
		closeStore(r.srv, r.s.Stderr)
	}
}

func arriveKey(k, node int) string { return "arrive/" + strconv.Itoa(k) + "/" + strconv.Itoa(node) }
func doneKey(k, node int) string   { return "done/" + strconv.Itoa(k) + "/" + strconv.Itoa(node) }
func restartKey(k int) string      { return "restart/" + strconv.Itoa(k) }

const endKey = "end"

// nodeKeys is key(k, n) for every node n.
func (r *rounds) nodeKeys(key func(k, node int) string, k int) []string {
	keys := make([]string, r.s.NNodes)
	for n := range keys {
		keys[n] = key(k, n)
	}
	return keys
}

// runRounds is RunRestarting for a job of several nodes.
func runRounds(ctx context.Context, base Spec) (*Result, error) {
	r, err := openRounds(ctx, base)
	if err != nil {
		return nil, err
	}
	defer r.close()
	for k := 0; ; k++ {
		res, again, err := r.round(ctx, k)
		if err != nil || !again {
			r.finish(ctx)
			return res, err
		}
		fmt.Fprintf(base.Stderr, "gocoll run: restarting the job (restart %d of at most %d)\n", k+1, base.MaxRestarts)
	}
}

// round runs this node's ranks for round k and says whether the job goes
// on to round k+1.
func (r *rounds) round(ctx context.Context, k int) (*Result, bool, error) {
	r.last = k
	if err := r.kv.Set(ctx, arriveKey(k, r.s.NodeRank), nil); err != nil {
		return nil, false, fmt.Errorf("the job's store: %v", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	watch := r.firstOf(wctx, []string{restartKey(k + 1)}, []string{endKey})
	go func() {
		if _, ok := <-watch; ok {
			close(stop)
		}
	}()
	var arrivals sync.WaitGroup
	if k > 0 {
		arrivals.Go(func() { r.awaitArrivals(wctx, k) })
	}
	res, err := run(ctx, roundSpec(r.s, k), runOptions{served: r.srv, stop: stop})
	cancel()
	arrivals.Wait() // it reads r.s, which the round's result changes next
	if res != nil {
		r.s = withLinks(r.s, res.Links) // the next round's cache (links.go)
	}
	if err != nil {
		r.end(ctx, fmt.Sprintf("node %d could not start its ranks: %v", r.s.NodeRank, err))
		return nil, false, err
	}
	if res.TimedOut || res.Interrupted != 0 || ctx.Err() != nil {
		r.end(ctx, fmt.Sprintf("node %d: %s", r.s.NodeRank, firstLine(res)))
		r.ended(ctx, res)
		return res, false, nil
	}
	if r.ended(ctx, res) {
		return res, false, nil
	}
	own := res.First >= 0 || res.ExitCode() != 0 && !res.Superseded
	switch {
	case own && k == r.s.MaxRestarts:
		r.end(ctx, fmt.Sprintf("node %d: %s (no restarts left)", r.s.NodeRank, firstLine(res)))
		r.ended(ctx, res)
		return res, false, nil
	case own:
		why := fmt.Sprintf("node %d: %s", r.s.NodeRank, firstLine(res))
		if _, _, err := r.kv.CompareAndSet(ctx, restartKey(k+1), nil, []byte(why)); err != nil {
			return res, false, fmt.Errorf("the job's store: %v", err)
		}
		res.Report(r.s.Stderr)
		return res, true, nil
	case res.Superseded:
		r.sayRestart(ctx, k+1)
		return res, true, nil
	}
	return r.awaitEnd(ctx, k, res)
}

// roundSpec is the Spec of round k: the restart count in every rank's
// environment, and a job id of its own after the first.
func roundSpec(base Spec, k int) Spec {
	s := base
	s.Export = append(append([]string(nil), base.Export...), // local and remote ranks
		EnvRestartCount+"="+strconv.Itoa(k), EnvTorchRestartCount+"="+strconv.Itoa(k))
	if k > 0 {
		s.JobID = base.JobID + "-r" + strconv.Itoa(k)
	}
	return s
}

// awaitEnd follows round k once this node's ranks have all succeeded: it
// posts so and waits for every other node's (success), a restart (the
// job goes on), end, or RdzvTimeout (end, naming the nodes not done).
func (r *rounds) awaitEnd(ctx context.Context, k int, res *Result) (*Result, bool, error) {
	if err := r.kv.Set(ctx, doneKey(k, r.s.NodeRank), nil); err != nil {
		return res, false, fmt.Errorf("the job's store: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, r.s.RdzvTimeout)
	defer cancel()
	first := r.firstOf(wctx, r.nodeKeys(doneKey, k), []string{restartKey(k + 1)}, []string{endKey})
	for {
		select {
		case i, ok := <-first:
			switch {
			case !ok:
				missing := r.missing(ctx, r.nodeKeys(doneKey, k))
				r.end(ctx, fmt.Sprintf("%s had not ended within --rdzv-timeout %v of node %d's ranks' success", nodeList(missing), r.s.RdzvTimeout, r.s.NodeRank))
				r.ended(ctx, res)
				return res, false, nil
			case i == 0:
				return res, false, nil
			case i == 1:
				r.sayRestart(ctx, k+1)
				return res, true, nil
			}
			r.ended(ctx, res)
			return res, false, nil
		case sig := <-r.s.Signals:
			if s, ok := sig.(syscall.Signal); ok && (s == syscall.SIGINT || s == syscall.SIGTERM || s == syscall.SIGHUP) {
				res.Interrupted = s
				r.end(ctx, fmt.Sprintf("node %d was stopped by signal %d (%v)", r.s.NodeRank, int(s), s))
				r.ended(ctx, res)
				return res, false, nil
			}
		}
	}
}

// awaitArrivals waits, for RdzvTimeout, for every node to start round k;
// past it (ctx not ended) it posts end naming the nodes that did not.
func (r *rounds) awaitArrivals(ctx context.Context, k int) {
	wctx, cancel := context.WithTimeout(ctx, r.s.RdzvTimeout)
	defer cancel()
	keys := r.nodeKeys(arriveKey, k)
	if err := r.kv.Wait(wctx, keys...); err == nil || ctx.Err() != nil {
		if err == nil {
			r.forgetRound(k - 1)
		}
		return
	}
	r.end(ctx, fmt.Sprintf("%s did not come back for restart %d within --rdzv-timeout %v", nodeList(r.missing(ctx, keys)), k, r.s.RdzvTimeout))
}

// forgetRound deletes, on node 0, the keys of round k once every node
// has started round k+1 (so none reads them any more): its ranks' (the
// round's job id) and the agreement's for round k (arrive, done, restart).
// Node 0's store then holds about one round's keys, however many restarts.
func (r *rounds) forgetRound(k int) {
	if r.srv == nil || k < 0 {
		return
	}
	r.srv.DeletePrefix(launcher.JobStorePrefix(roundSpec(r.s, k).JobID))
	for n := range r.s.NNodes {
		_, _ = r.kv.Delete(context.Background(), arriveKey(k, n))
		_, _ = r.kv.Delete(context.Background(), doneKey(k, n))
	}
	_, _ = r.kv.Delete(context.Background(), restartKey(k))
}

// missing returns the nodes whose key (of keys, by node) is absent.
func (r *rounds) missing(ctx context.Context, keys []string) []int {
	var nodes []int
	for n, key := range keys {
		if _, ok, err := r.kv.TryGet(ctx, key); err == nil && !ok {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// nodeList names nodes: "node 1", "nodes 1, 3".
func nodeList(nodes []int) string {
	if len(nodes) == 1 {
		return "node " + strconv.Itoa(nodes[0])
	}
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = strconv.Itoa(n)
	}
	return "nodes " + strings.Join(parts, ", ")
}

// end posts that the job has failed, why (the first reason posted stays).
func (r *rounds) end(ctx context.Context, why string) {
	_, _, _ = r.kv.CompareAndSet(ctx, endKey, nil, []byte(why)) // a store gone: ended says so
}

// ended reports whether the job has failed (end posted, by any node);
// then res.NodeEnd says why.
func (r *rounds) ended(ctx context.Context, res *Result) bool {
	why, ok, err := r.kv.TryGet(ctx, endKey)
	if err != nil {
		res.NodeEnd = fmt.Sprintf("the job's store is gone (%v): the job cannot go on", err)
		return true
	}
	if ok {
		res.NodeEnd = "the job failed: " + string(why)
	}
	return ok
}

// sayRestart writes why round k was asked for, by another node.
func (r *rounds) sayRestart(ctx context.Context, k int) {
	why, _, _ := r.kv.TryGet(ctx, restartKey(k))
	fmt.Fprintf(r.s.Stderr, "gocoll run: restart %d asked for: %s\n", k, why)
}

// finish posts that this node has seen the job's end; node 0 then waits,
// at most RdzvTimeout (or until a stopping signal: Ctrl-C), for every node
// that started the last round to say so too, before its store closes.
func (r *rounds) finish(ctx context.Context) {
	_ = r.kv.Set(ctx, "exit/"+strconv.Itoa(r.s.NodeRank), nil)
	if r.srv == nil {
		return
	}
	var keys []string
	for n := range r.s.NNodes {
		if _, ok, err := r.kv.TryGet(ctx, arriveKey(r.last, n)); err == nil && ok {
			keys = append(keys, "exit/"+strconv.Itoa(n))
		}
	}
	sctx, stop := stopOn(ctx, r.s.Signals) // Ctrl-C: leave now
	defer stop()
	wctx, cancel := context.WithTimeout(sctx, r.s.RdzvTimeout)
	defer cancel()
	_ = r.kv.Wait(wctx, keys...)
}

// firstOf waits for each set of keys (all of a set present) and sends the
// index of the first set complete; the channel closes without a value if
// ctx ends first.
func (r *rounds) firstOf(ctx context.Context, sets ...[]string) <-chan int {
	out := make(chan int, 1)
	wctx, cancel := context.WithCancel(ctx)
	won := make(chan int, len(sets))
	for i, keys := range sets {
		go func() {
			if r.kv.Wait(wctx, keys...) == nil {
				won <- i
			}
		}()
	}
	go func() {
		defer cancel()
		defer close(out)
		select {
		case i := <-won:
			out <- i
		case <-wctx.Done():
		}
	}()
	return out
}

// firstLine is the first line of res's report: how the run failed.
func firstLine(res *Result) string {
	var b strings.Builder
	res.Report(&b)
	line, _, _ := strings.Cut(b.String(), "\n")
	line = strings.TrimPrefix(line, "gocoll run: ")
	if line == "" {
		return "its ranks failed"
	}
	return line
}
