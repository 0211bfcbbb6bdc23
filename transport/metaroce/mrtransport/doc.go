// Package mrtransport is gocoll's [transport.Endpoint] over MetaRoCE on
// real UDP sockets: the engine that drives the pure MetaRoCE core
// ([metaroce.Endpoint]) with goroutines, sockets and the real clock, and
// the mapping of the transport contract onto the core's messages.
package mrtransport
