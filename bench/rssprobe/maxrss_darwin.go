package main

// maxrssUnit is the unit of getrusage's ru_maxrss in bytes: macOS (and
// iOS) count bytes (getrusage(2) of Darwin), unlike Linux and the BSDs.
const maxrssUnit = 1
