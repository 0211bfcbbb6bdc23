//go:build unix && !darwin

package main

// maxrssUnit is the unit of getrusage's ru_maxrss in bytes: Linux and the
// BSDs count KiB (getrusage(2)); macOS counts bytes (maxrss_darwin.go).
const maxrssUnit = 1024
