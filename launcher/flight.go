package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher/store"
)

// Hang diagnosis goes through the job's store. Every rank answers
// requests for its flight record; gocoll run (RequestFlightRecords) and
// World.Diagnose make them. A rank whose operation stalls posts a notice,
// on which gocoll run gathers and prints the report. The keys, under the
// job's prefix:
//
//	diag/n            the number of the latest request (store Add)
//	diag/go/<n>       set by request n: every rank waits on it
//	diag/rec/<n>/<r>  rank r's answer to request n: its flight record (JSON)
//	diag/stalls       the number of stall notices (store Add)
//	diag/stall/<s>    notice s: the rank whose operation stalled
//	diag/verdict/<s>  the headline of the job's report on notice s, which
//	                  the noticing rank prints and deletes
//
// A requester deletes request n's keys once it has read the answers.
const (
	diagCountKey  = "diag/n"
	diagStallsKey = "diag/stalls"
)

func diagGoKey(n int64) string { return "diag/go/" + strconv.FormatInt(n, 10) }
func diagRecKey(n int64, r int) string {
	return "diag/rec/" + strconv.FormatInt(n, 10) + "/" + strconv.Itoa(r)
}
func diagStallKey(s int64) string   { return "diag/stall/" + strconv.FormatInt(s, 10) }
func diagVerdictKey(s int64) string { return "diag/verdict/" + strconv.FormatInt(s, 10) }

// verdictWait bounds how long a stalled rank waits for the job's report
// on its stall (gocoll run's; under another launcher none comes).
const verdictWait = 3 * time.Second

func parseCounter(b []byte) (int64, error) { return strconv.ParseInt(string(b), 10, 64) }

// maxFlightBytes bounds a flight record left in the store: the oldest
// operations are dropped until it fits.
const maxFlightBytes = 64 << 10

// DefaultDiagnoseWait is how long RequestFlightRecords waits for the
// ranks' answers when its context has no deadline: a rank that has not
// answered by then (stopped, or gone) counts as not answering.
const DefaultDiagnoseWait = time.Second

// JobStore is the view of the store that a job's ranks (and its launcher)
// share: the keys under the job's prefix.
func JobStore(s store.Store, jobID string) store.Store {
	return store.Prefixed(s, JobStorePrefix(jobID))
}

// JobStorePrefix is the prefix of every key JobStore(s, jobID) stores in s.
func JobStorePrefix(jobID string) string {
	return "gocoll/" + strconv.Itoa(len(jobID)) + ":" + jobID + "/"
}

// stallHandler is the world communicator's Config.OnStall where Join's
// Config leaves it unset: it writes the report to the rank's notices
// (stderr) and posts a stall notice in the store, on which gocoll run
// gathers every rank's flight record and prints one report.
func (lc *lifecycle) stallHandler() func(collective.StallReport) {
	return func(s collective.StallReport) {
		fmt.Fprint(lc.job.noticesTo(), s.String())
		go lc.noticeStall(s.Op)
	}
}

// noticeStall posts a stall notice of this rank, within noteTimeout;
// then, if the job's report on it comes within verdictWait (gocoll run
// writes its headline), it prints that too, so that every stalled rank
// names the rank the whole job points at, not only the one it waits on.
func (lc *lifecycle) noticeStall(op collective.OpRecord) {
	if lc.closing.Load() || lc.storeGone.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
	s, err := lc.kv.Add(ctx, diagStallsKey, 1)
	if err == nil {
		err = lc.kv.Set(ctx, diagStallKey(s), []byte(strconv.Itoa(lc.job.Rank)))
	}
	cancel()
	if err != nil {
		lc.log.Info("gocoll: could not post a stall notice in the store", "err", err)
		return
	}
	ctx, cancel = context.WithTimeout(context.Background(), verdictWait)
	defer cancel()
	v, err := lc.kv.Get(ctx, diagVerdictKey(s))
	if err != nil { // no launcher that answers: the notice goes
		dctx, dcancel := context.WithTimeout(context.Background(), noteTimeout)
		_, _ = lc.kv.Delete(dctx, diagStallKey(s))
		dcancel()
		return
	}
	_, _ = lc.kv.Delete(ctx, diagVerdictKey(s))
	text := strings.TrimPrefix(string(v), "gocoll: ")
	fmt.Fprintf(lc.job.noticesTo(), "gocoll: stall: rank %d: the job's hang report: %s\n", lc.job.Rank, text)
	if c := lc.comm.Load(); c != nil {
		c.SetHangVerdict(op.Comm, op.Seq, text)
	}
}

// PostVerdict answers stall notice s in the job's store kv (see
// JobStore, StallNotices) with headline, the job's diagnosis of it,
// which the noticing rank prints.
func PostVerdict(ctx context.Context, kv store.Store, s int64, headline string) error {
	return kv.Set(ctx, diagVerdictKey(s), []byte(headline))
}

// encodeFlight is recs as JSON, the oldest dropped until it fits in
// maxFlightBytes.
func encodeFlight(recs []collective.OpRecord) ([]byte, error) {
	b, err := json.Marshal(recs)
	for err == nil && len(b) > maxFlightBytes && len(recs) > 0 {
		recs = recs[len(recs)/4+1:]
		b, err = json.Marshal(recs)
	}
	return b, err
}

// answerDiagnoses starts the goroutine that answers requests for comm's
// flight record until the store closes (and keeps comm for the stall
// verdicts, see noticeStall). Requests made
// since its last answer get one answer each (the newest 8 at most), so
// that two requesters at once both hear from every rank; one whose
// requester has already given up (its diag/go key is gone) gets none.
// The latest request made before it starts is answered too, if its
// requester still waits.
func (lc *lifecycle) answerDiagnoses(comm *collective.Comm) {
	lc.comm.Store(comm)
	records := comm.FlightRecord
	ctx := context.Background()
	n, err := lc.latestRequest(ctx)
	go func() {
		if err == nil && n > 0 {
			if aerr := lc.answer(ctx, records(), n, n); aerr != nil {
				lc.log.Info("gocoll: could not answer a request for the flight record", "err", aerr)
			}
		}
		for err == nil && !lc.closing.Load() && !lc.storeGone.Load() {
			if err = lc.awaitRequest(ctx, n+1); err != nil {
				return // the store closed (or is gone: the watcher says so)
			}
			var latest int64
			if latest, err = lc.latestRequest(ctx); err != nil {
				return
			}
			latest = max(latest, n+1)
			if aerr := lc.answer(ctx, records(), max(n+1, latest-7), latest); aerr != nil {
				lc.log.Info("gocoll: could not answer a request for the flight record", "err", aerr)
			}
			n = latest
		}
	}()
}

// answer leaves recs as this rank's answer to requests from to to, each
// unless its requester gave up.
func (lc *lifecycle) answer(ctx context.Context, recs []collective.OpRecord, from, to int64) error {
	b, err := encodeFlight(recs)
	if err != nil {
		lc.log.Info("gocoll: could not encode the flight record", "err", err)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, noteTimeout)
	defer cancel()
	for k := from; k <= to; k++ {
		if _, open, err := lc.kv.TryGet(ctx, diagGoKey(k)); err != nil || !open {
			if err != nil {
				return err
			}
			continue
		}
		if err := lc.kv.Set(ctx, diagRecKey(k, lc.job.Rank), b); err != nil {
			return err
		}
	}
	return nil
}

// maxWaitingAnswerers is the largest job whose ranks each hold a wait on
// the store for the next request (the store's waits are bounded:
// store.DefaultMaxPendingWaits); the ranks of a larger job look for one
// at every heartbeat instead, a load equal to the heartbeats'.
const maxWaitingAnswerers = 1024

// awaitRequest returns once request n has been made, or the store fails
// or the world closes.
func (lc *lifecycle) awaitRequest(ctx context.Context, n int64) error {
	if lc.job.Size <= maxWaitingAnswerers {
		return lc.kv.Wait(ctx, diagGoKey(n))
	}
	for !lc.closing.Load() {
		latest, err := lc.latestRequest(ctx)
		if err != nil || latest >= n {
			return err
		}
		time.Sleep(lc.heartbeatEvery())
	}
	return store.ErrClosed
}

// latestRequest is the number of the latest request for flight records.
func (lc *lifecycle) latestRequest(ctx context.Context) (int64, error) {
	b, ok, err := lc.kv.TryGet(ctx, diagCountKey)
	if err != nil || !ok {
		return 0, err
	}
	return parseCounter(b)
}

// RequestFlightRecords asks every rank of a job of size ranks, through
// the job's store kv (see JobStore), for its flight record, and returns
// them by rank: nil for a rank that did not answer before ctx ended (or,
// if ctx has no deadline, within DefaultDiagnoseWait). The answers are
// what each rank's world communicator records (collective.Comm's
// FlightRecord); collective.Diagnose reads them. It errs only if the
// store does.
func RequestFlightRecords(ctx context.Context, kv store.Store, size int) ([][]collective.OpRecord, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultDiagnoseWait)
		defer cancel()
	}
	n, err := kv.Add(ctx, diagCountKey, 1)
	if err != nil {
		return nil, fmt.Errorf("gocoll: asking for flight records: %w", err)
	}
	if err := kv.Set(ctx, diagGoKey(n), nil); err != nil {
		return nil, fmt.Errorf("gocoll: asking for flight records: %w", err)
	}
	keys := make([]string, size)
	for r := range keys {
		keys[r] = diagRecKey(n, r)
	}
	var missing *store.MissingKeysError
	if err := kv.Wait(ctx, keys...); err != nil && !errors.As(err, &missing) {
		return nil, fmt.Errorf("gocoll: waiting for flight records: %w", err)
	}
	// Read what came, with a context of its own: ctx may have ended.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), noteTimeout)
	defer cancel()
	records := make([][]collective.OpRecord, size)
	var bad error
	for r, k := range keys {
		b, ok, err := kv.TryGet(rctx, k)
		if err != nil {
			return nil, fmt.Errorf("gocoll: reading rank %d's flight record: %w", r, err)
		}
		if !ok {
			continue
		}
		_, _ = kv.Delete(rctx, k)
		var recs []collective.OpRecord
		if err := json.Unmarshal(b, &recs); err != nil {
			bad = errors.Join(bad, fmt.Errorf("gocoll: rank %d's flight record: %w", r, err))
			continue
		}
		if recs == nil {
			recs = []collective.OpRecord{}
		}
		records[r] = recs
	}
	_, _ = kv.Delete(rctx, diagGoKey(n))
	return records, bad
}

// DiagnoseRecords is collective.Diagnose of the world communicator over
// records as RequestFlightRecords returns them.
func DiagnoseRecords(records [][]collective.OpRecord) collective.Diagnosis {
	return collective.Diagnose(worldCommID, records)
}

// StallNotices calls notice with the number and the rank of each stall
// notice posted in the job's store kv (see JobStore) from now on, in
// order, until ctx ends or the store fails; it returns that error (nil
// when ctx ended). A notice may be answered with PostVerdict.
func StallNotices(ctx context.Context, kv store.Store, notice func(s int64, rank int)) error {
	var next int64 = 1
	if b, ok, err := kv.TryGet(ctx, diagStallsKey); err != nil {
		return ignoreEnded(ctx, err)
	} else if ok {
		if v, err := parseCounter(b); err == nil {
			next = v + 1
		}
	}
	for {
		b, err := kv.Get(ctx, diagStallKey(next))
		if err != nil {
			return ignoreEnded(ctx, err)
		}
		_, _ = kv.Delete(ctx, diagStallKey(next))
		if r, err := strconv.Atoi(string(b)); err == nil {
			notice(next, r)
		}
		next++
	}
}

func ignoreEnded(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Diagnose asks every rank for its flight record through the store (see
// RequestFlightRecords; a rank that does not answer while ctx lasts, or
// DefaultDiagnoseWait if ctx has no deadline, counts as not answering)
// and names the rank that holds up the oldest operation of the world
// communicator still running; see collective.Diagnose. This rank's own
// record is read fresh.
func (w *World) Diagnose(ctx context.Context) (collective.Diagnosis, error) {
	records, err := RequestFlightRecords(ctx, w.life.kv, w.Size())
	if records == nil {
		return collective.Diagnosis{}, err
	}
	records[w.Rank()] = w.FlightRecord()
	return DiagnoseRecords(records), err
}
