package launcher

import (
	"fmt"
	"net"
	"strings"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// keySettings applies GOCOLL_JOB_KEY and GOCOLL_INSECURE, last, so that
// a job missing its key learns first of any other mistake.
func (e envReader) keySettings(j *Job) error {
	insecure, err := e.flag(EnvInsecure, false)
	if err != nil {
		return err
	}
	switch {
	case e.has(EnvJobKey):
		j.JobKey, err = e.jobKey()
		return err
	case insecure && !isLoopbackStore(j.Store):
		return fmt.Errorf("gocoll: %s=1 is for a single host, but the store %s is not on loopback: set %s", EnvInsecure, j.Store, EnvJobKey)
	case insecure:
		j.JobKey = jobkey.Insecure()
		return nil
	case e.get(EnvJobKeyStdin) == "1":
		return fmt.Errorf("gocoll: %s is set but no job key was read from stdin", EnvJobKeyStdin)
	}
	return fmt.Errorf("gocoll: no job key: set %s to the same secret on every rank (%d to %d printable characters; gocoll run makes one), or %s=1 to run unauthenticated on one host",
		EnvJobKey, MinJobKeyBytes, MaxJobKeyBytes, EnvInsecure)
}

// jobKey parses GOCOLL_JOB_KEY. Its errors never show the key.
func (e envReader) jobKey() (jobkey.Key, error) {
	k, err := jobkey.Parse(e.get(EnvJobKey))
	if err != nil {
		return k, fmt.Errorf("gocoll: %s: %v", EnvJobKey, err)
	}
	return k, nil
}

// isLoopbackStore reports whether the store address host:port is on loopback.
func isLoopbackStore(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// protection applies GOCOLL_AUTH and GOCOLL_ENCRYPT.
func (e envReader) protection(j *Job) error {
	switch v := strings.ToLower(e.get(EnvAuth)); v {
	case "", "header":
	case "full":
		j.AuthFull = true
	default:
		return fmt.Errorf("gocoll: %s=%q: want header or full", EnvAuth, v)
	}
	switch v := strings.ToLower(e.get(EnvEncrypt)); v {
	case "", "0", "off":
	case EncryptSites, EncryptAll:
		j.Encrypt = v
	default:
		return fmt.Errorf("gocoll: %s=%q: want off, %s or %s", EnvEncrypt, v, EncryptSites, EncryptAll)
	}
	return nil
}
