package launcher

import (
	"strings"
	"sync/atomic"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/tcp"
)

// transportAuth is how a rank's transports authenticate with the job key
// (issue 16): the key (the zero Key under GOCOLL_INSECURE=1, whose key
// anyone knows: the transports then run as without one), whether
// payloads are tagged too (GOCOLL_AUTH=full) and where traffic is
// encrypted (GOCOLL_ENCRYPT). A nil *transportAuth is no key.
type transportAuth struct {
	key     jobkey.Key
	full    bool
	encrypt string // "", EncryptSites or EncryptAll
	site    string // this rank's site
	// sites holds every rank's site (EncryptSites), from the MetaRoCE
	// addresses, once Connect has them; MetaRoCE's core may ask for it
	// from its reader goroutines before.
	sites atomic.Pointer[[]string]
}

// newTransportAuth returns job's transport authentication.
func newTransportAuth(job Job) *transportAuth {
	a := &transportAuth{full: job.AuthFull, encrypt: job.Encrypt, site: job.Site}
	if !job.JobKey.IsInsecure() {
		a.key = job.JobKey
	}
	if a.site == "" {
		a.site = topology.DefaultSite
	}
	return a
}

// metaroce returns MetaRoCE's authentication for rank.
func (a *transportAuth) metaroce(rank int) metaroce.AuthConfig {
	if a == nil || a.key.IsZero() {
		return metaroce.AuthConfig{}
	}
	mode := metaroce.AuthHeader
	if a.full {
		mode = metaroce.AuthFull
	}
	cfg := metaroce.AuthConfig{Key: a.key, Mode: mode}
	switch a.encrypt {
	case EncryptAll:
		cfg.Mode = metaroce.AuthEncrypt
	case EncryptSites:
		cfg.PeerMode = func(peer uint64) metaroce.AuthMode {
			if s := a.sites.Load(); s != nil && peer < uint64(len(*s)) && (*s)[peer] != a.site {
				return metaroce.AuthEncrypt
			}
			return mode // unknown yet: the dialling (lower) rank knows, and the higher mode wins
		}
	}
	return cfg
}

// tcp returns cfg with TCP's authentication: the key, GOCOLL_AUTH=full's
// tagged payloads, GOCOLL_ENCRYPT's encrypted ones (all, or between sites).
func (a *transportAuth) tcp(cfg tcp.Config) tcp.Config {
	if a == nil || a.key.IsZero() {
		return cfg
	}
	cfg.Key = a.key
	if a.full {
		cfg.Payload = tcp.PayloadTagged
	}
	switch a.encrypt {
	case EncryptAll:
		cfg.Payload = tcp.PayloadEncrypted
	case EncryptSites:
		cfg.PeerPayload = func(peer int) tcp.PayloadMode {
			if s := a.sites.Load(); s != nil && peer < len(*s) && (*s)[peer] != a.site {
				return tcp.PayloadEncrypted
			}
			return tcp.PayloadClear // unknown yet: the dialling rank knows, and the higher mode wins
		}
	}
	return cfg
}

// siteSep ends a MetaRoCE address and begins its rank's site, under
// EncryptSites; MetaRoCE's addresses never contain it.
const siteSep = "/"

// withSite appends this rank's site to its MetaRoCE address addr under
// EncryptSites.
func (a *transportAuth) withSite(addr string) string {
	if a == nil || a.key.IsZero() || a.encrypt != EncryptSites {
		return addr
	}
	return addr + siteSep + a.site
}

// learnSites takes the sites off the ranks' MetaRoCE addresses under
// EncryptSites, keeps them for PeerMode and returns the bare addresses.
func (a *transportAuth) learnSites(addrs []string) []string {
	if a == nil || a.key.IsZero() || a.encrypt != EncryptSites {
		return addrs
	}
	bare, sites := make([]string, len(addrs)), make([]string, len(addrs))
	for r, s := range addrs {
		bare[r], sites[r], _ = strings.Cut(s, siteSep)
	}
	a.sites.Store(&sites)
	return bare
}

// transportKey is the key the TCP and shared-memory transports
// authenticate with: the zero Key without one.
func (a *transportAuth) transportKey() jobkey.Key {
	if a == nil {
		return jobkey.Key{}
	}
	return a.key
}
