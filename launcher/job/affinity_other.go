//go:build unix && !linux

package job

import "os/exec"

// startBound starts cmd; cpus is always empty here (affinity.Cores is nil,
// so --bind-to core is refused).
func startBound(cmd *exec.Cmd, _ []int) error { return cmd.Start() }
