package job

import "github.com/gocoll/gocoll/launcher"

// keyLine is what startProc writes first on a remote rank's stdin: the job
// key found in env (the rsh command's environment, from plan.command) and
// a newline, which launcher.ReadEnv reads under GOCOLL_JOB_KEY_STDIN=1. It
// is nil if env holds no key.
func keyLine(env []string) []byte {
	key, ok := launcher.LookupIn(env)(launcher.EnvJobKey)
	if !ok || key == "" {
		return nil
	}
	return append([]byte(key), '\n')
}
