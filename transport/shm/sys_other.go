//go:build !linux

package shm

import "errors"

// bootID fails off Linux, where this transport does not run.
func bootID() (string, error) {
	return "", errors.New("shm: shared-memory transport needs Linux")
}
