package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/gocoll/gocoll/collective"
)

// flightKey is where a rank leaves its flight record in the job's store.
func flightKey(rank int) string { return "flight/" + strconv.Itoa(rank) }

// maxFlightBytes bounds a flight record left in the store: the oldest
// operations are dropped until it fits.
const maxFlightBytes = 64 << 10

// stallHandler is the world communicator's Config.OnStall where Join's
// Config leaves it unset: it writes the report to the rank's notices
// (stderr) and leaves the rank's whole flight record in the store, where
// World.Diagnose reads every rank's. records is read when the stall fires.
func (lc *lifecycle) stallHandler(records func() []collective.OpRecord) func(collective.StallReport) {
	return func(s collective.StallReport) {
		fmt.Fprint(lc.job.noticesTo(), s.String())
		recs := records()
		go func() { _ = lc.publishFlight(context.Background(), recs) }()
	}
}

// publishFlight writes recs as this rank's flight record, within
// noteTimeout.
func (lc *lifecycle) publishFlight(ctx context.Context, recs []collective.OpRecord) error {
	if lc.closing.Load() || lc.storeGone.Load() {
		return nil
	}
	b, err := json.Marshal(recs)
	for err == nil && len(b) > maxFlightBytes && len(recs) > 0 {
		recs = recs[len(recs)/4+1:]
		b, err = json.Marshal(recs)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, noteTimeout)
	defer cancel()
	if err := lc.kv.Set(ctx, flightKey(lc.job.Rank), b); err != nil {
		lc.log.Info("gocoll: could not leave the flight record in the store", "err", err)
		return err
	}
	return nil
}

// PublishFlight leaves this rank's flight record (collective.Comm's
// FlightRecord) in the job's store, for Diagnose. A rank does it by itself
// when one of its operations stalls.
func (w *World) PublishFlight(ctx context.Context) error {
	return w.life.publishFlight(ctx, w.FlightRecord())
}

// Diagnose reads every rank's flight record from the store (a rank that
// left none counts as not answering) and names the rank that holds up the
// oldest operation of the world communicator still running; see
// collective.Diagnose. This rank's own record is read fresh.
func (w *World) Diagnose(ctx context.Context) (collective.Diagnosis, error) {
	records := make([][]collective.OpRecord, w.Size())
	for r := range records {
		if r == w.Rank() {
			records[r] = w.FlightRecord()
			continue
		}
		b, ok, err := w.life.kv.TryGet(ctx, flightKey(r))
		if err != nil {
			return collective.Diagnosis{}, fmt.Errorf("gocoll: reading rank %d's flight record: %w", r, err)
		}
		if !ok {
			continue
		}
		var recs []collective.OpRecord
		if err := json.Unmarshal(b, &recs); err != nil {
			return collective.Diagnosis{}, fmt.Errorf("gocoll: rank %d's flight record: %w", r, err)
		}
		records[r] = recs
		if recs == nil {
			records[r] = []collective.OpRecord{}
		}
	}
	return collective.Diagnose(w.ID(), records), nil
}
