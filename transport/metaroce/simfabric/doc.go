// Package simfabric is a deterministic, seeded, discrete-event network that
// runs in virtual time. It exists to drive sans-I/O transport cores (such as
// MetaRoCE's) through loss, queueing, ECN marking, reordering and link
// failures, and to reproduce any run exactly from its seed.
//
// # Model
//
// A [Fabric] holds nodes, links and paths. A link ([LinkConfig]) is a
// directed pipe: a FIFO queue of bounded size in front of a transmitter of a
// given rate, followed by a propagation delay. Links are not bound to nodes;
// a path ([Fabric.AddPath]) names the node its packets leave, the node they
// reach, and the links they cross in order, store and forward. Many paths may
// share a link (16 senders into one bottleneck), and several paths between
// the same two nodes may each use their own link (multipath, ECMP). Since
// links are directed, a failure of one direction only is a fault on one link.
//
// Time is a [time.Duration] since the start of the run. Nothing happens
// between calls: [Fabric.Send] injects a packet at [Fabric.Now], and
// [Fabric.AdvanceTo] moves virtual time forward, delivering every packet
// that arrives on the way, in time order. There are no goroutines, no real
// clock and no map iteration: a run is a pure function of the [Config]
// (including its Seed) and the sequence of calls made on the Fabric. Events
// at the same instant are ordered by the rule documented on AdvanceTo.
//
// # Driving a sans-I/O core
//
// A driver loop interleaves the fabric's next event with the endpoints'
// next timers, here for MetaRoCE endpoints (one per node):
//
//	deliver := func(d simfabric.Delivery) {
//		eps[d.To].HandleDatagram(d.At, pathIndex[d.Path], d.CE, d.Data)
//		flush(d.To) // PollTransmit into fab.Send, PollEvent: allowed here
//	}
//	for !done() {
//		next, ok := fab.NextEventTime()
//		for _, ep := range eps {
//			if t, tok := ep.NextTimeout(); tok && (!ok || t < next) {
//				next, ok = t, true
//			}
//		}
//		if !ok || next > limit {
//			break
//		}
//		next = max(next, fab.Now()) // a timer already due runs now
//		if err := fab.AdvanceTo(next, deliver); err != nil {
//			return err
//		}
//		for n, ep := range eps {
//			ep.HandleTimeout(next)
//			flush(n)
//		}
//	}
//
// PathIDs are numbered across the whole fabric, so a driver keeps its own
// map between them and the endpoint's per-peer path indexes. Example_metaroce
// is a complete driver.
//
// The deliver callback may call Send, Schedule, Now and Stats; packets it
// sends enter the fabric at the delivery time and are delivered by the same
// AdvanceTo call if they arrive by its target time. It must not call
// AdvanceTo.
//
// # Faults
//
// Faults are data ([Fault]) scheduled at virtual times: cut a link, restore
// it, or replace its configuration (loss, rate, ECN threshold, ...). A cut
// link is a gray failure: it silently drops every packet that enters it and
// every packet that was on it (queued or propagating) when it was cut.
//
// # Limits
//
// Every table and queue is bounded ([Config] documents the defaults and the
// hard limits). Bad configuration and exceeded limits give errors, never
// panics.
package simfabric
