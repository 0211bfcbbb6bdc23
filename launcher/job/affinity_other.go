//go:build unix && !linux

package job

import "os/exec"

// hostCores is nil where the launcher cannot bind (see affinity_linux.go):
// --bind-to core is then an error.
func hostCores() [][]int { return nil }

// startBound starts cmd; cpus is always empty here.
func startBound(cmd *exec.Cmd, _ []int) error { return cmd.Start() }
