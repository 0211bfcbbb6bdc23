package job

import "fmt"

// Failure policies: Spec.OnFailure, gocoll run --on-failure.
const (
	// OnFailureStop stops every other rank once one has failed (after
	// Spec.Grace): today's behaviour, and the default.
	OnFailureStop = "stop"
	// OnFailureContinue leaves the other ranks running when one fails:
	// they learn of it through their transports and health checks, and
	// can shrink their communicator and go on. The job's exit status
	// still reports the failure.
	OnFailureContinue = "continue"
)

// fillOnFailure sets the default policy, or refuses an unknown one.
func (s *Spec) fillOnFailure() error {
	switch s.OnFailure {
	case "":
		s.OnFailure = OnFailureStop
	case OnFailureStop, OnFailureContinue:
	default:
		return fmt.Errorf("--on-failure %q: want %s or %s", s.OnFailure, OnFailureStop, OnFailureContinue)
	}
	return nil
}
