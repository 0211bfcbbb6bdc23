package simfabric

import (
	"fmt"
	"time"
)

// FaultKind says what a Fault does to its link.
type FaultKind uint8

const (
	// Cut makes the link drop every packet that enters it and every packet
	// on it (queued or propagating), silently, until restored.
	Cut FaultKind = iota + 1
	// Restore ends a cut; packets entering from then on pass again. Packets
	// that were on the link at the cut stay lost.
	Restore
	// SetConfig replaces the link's configuration with Fault.Config (loss,
	// rate, ECN threshold, ...). Packets already queued keep the
	// serialisation and delay they were given; later ones see the new
	// configuration. Cut state is unchanged.
	SetConfig
)

func (k FaultKind) String() string {
	switch k {
	case Cut:
		return "cut"
	case Restore:
		return "restore"
	case SetConfig:
		return "set-config"
	}
	return fmt.Sprintf("FaultKind(%d)", uint8(k))
}

// Fault is a change to one link at a virtual time. Faults are plain data so
// that a scenario's whole fault plan can be written down and replayed.
type Fault struct {
	At     time.Duration
	Link   LinkID
	Kind   FaultKind
	Config LinkConfig // the new configuration, for SetConfig only
}

type faultEvent struct {
	at    time.Duration
	seq   uint64
	fault Fault
}

func (e faultEvent) key() (time.Duration, uint64) { return e.at, e.seq }

// Schedule schedules faults. A fault at Now applies at once; later ones
// apply when AdvanceTo reaches their time, before any packet event at that
// instant (so a cut at T drops a packet arriving at T). Schedule checks
// every fault first and schedules none if one is bad (unknown link or kind,
// time before Now, bad Config) or if MaxFaults would be exceeded.
func (f *Fabric) Schedule(faults ...Fault) error {
	for i := range faults {
		ft := &faults[i]
		switch {
		case !f.validLink(ft.Link):
			return fmt.Errorf("%w: fault %d: link %d", ErrNotFound, i, ft.Link)
		case ft.At < f.now:
			return fmt.Errorf("%w: fault %d at %v, now %v", ErrPast, i, ft.At, f.now)
		case ft.Kind < Cut || ft.Kind > SetConfig:
			return fmt.Errorf("%w: fault %d: kind %v", ErrConfig, i, ft.Kind)
		}
		if ft.Kind == SetConfig {
			if _, err := ft.Config.withDefaults(); err != nil {
				return fmt.Errorf("fault %d: %w", i, err)
			}
		}
	}
	future := 0
	for _, ft := range faults {
		if ft.At > f.now {
			future++
		}
	}
	if f.faults.len()+future > f.cfg.MaxFaults {
		return fmt.Errorf("%w: MaxFaults=%d", ErrLimit, f.cfg.MaxFaults)
	}
	for _, ft := range faults {
		if ft.At == f.now {
			f.apply(ft)
			continue
		}
		f.seq++
		f.faults.push(faultEvent{at: ft.At, seq: f.seq, fault: ft})
	}
	return nil
}

// LinkConfig returns a link's current configuration, defaults filled in, and
// whether it is cut.
func (f *Fabric) LinkConfig(id LinkID) (cfg LinkConfig, cut bool, err error) {
	if !f.validLink(id) {
		return LinkConfig{}, false, fmt.Errorf("%w: link %d", ErrNotFound, id)
	}
	return f.links[id].cfg, f.links[id].cut, nil
}

// apply performs a fault that Schedule validated.
func (f *Fabric) apply(ft Fault) {
	l := f.links[ft.Link]
	switch ft.Kind {
	case Cut:
		l.cut = true
		l.epoch++
		l.flush(f.now)
	case Restore:
		l.cut = false
	case SetConfig:
		cfg, err := ft.Config.withDefaults()
		if err != nil {
			panic("simfabric: fault config changed after validation: " + err.Error())
		}
		l.cfg = cfg
		l.busyRem = 0 // a fraction of a nanosecond in the old rate's units
	default:
		panic("simfabric: unknown fault kind after validation")
	}
}
